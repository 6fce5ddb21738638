//! The rules of the contract, one by one, and which of them a run actually exercised.
//!
//! A green run means something only if the situations that tell a right backend from a wrong
//! one were reached: a NUL one byte inside and one byte outside the sniff window, a file exactly
//! at a `read_bytes` cap, a character split across a stream chunk, a target used after the world
//! changed under it. For every rule the harness counts the steps that exercised it *in such a
//! situation* (a step that agreed with the model there; a step that failed is a failure, not
//! coverage), and the report lists the rules a run never reached. A rule that needs a
//! capability the backend does not claim is "not applicable", not unreached.

use seam::Capability;

macro_rules! rules {
    ($( $variant:ident = $id:literal, $needs:expr, $text:literal; )*) => {
        /// One rule of the contract, as the suite counts it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Rule {
            $(
                #[doc = $text]
                $variant,
            )*
        }

        impl Rule {
            /// Every rule, in the order reports list them.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// A stable dotted id (`read.nul-window-last-byte`).
            pub fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// What the rule says, and the situation that exercises it.
            pub fn text(self) -> &'static str {
                match self { $(Rule::$variant => $text,)* }
            }

            /// The capability the rule belongs to; `None` for the core contract.
            pub fn needs(self) -> Option<Capability> {
                match self { $(Rule::$variant => $needs,)* }
            }
        }
    };
}

const CORE: Option<Capability> = None;
const LINKS: Option<Capability> = Some(Capability::Symlinks);
const PERMS: Option<Capability> = Some(Capability::Permissions);
const MODES: Option<Capability> = Some(Capability::Modes);
const BYTES: Option<Capability> = Some(Capability::ReadBytes);
const CANCEL: Option<Capability> = Some(Capability::CancelPoints);
const STAGING: Option<Capability> = Some(Capability::StagingProbe);
const SANDBOX: Option<Capability> = Some(Capability::SandboxModes);
const SHARED: Option<Capability> = Some(Capability::SharedStorage);
const READS: Option<Capability> = Some(Capability::ReadFence);
const NAMES: Option<Capability> = Some(Capability::Namespace);
const DURABLE: Option<Capability> = Some(Capability::Durable);

rules! {
    PathBlank = "path.blank", CORE, "a blank path is FS_NOT_FOUND with the blank-path text";
    PathRefusedAsGiven = "path.refused-as-given", CORE, "a refused spelling (a NUL, an over-long name) with `./`, `..` or a trailing slash is named as given, not normalised";
    PathCwd = "path.cwd", CORE, "a relative path resolves against the working directory the call gives (ResolveOptions::cwd), not the backend's own";
    PathNul = "path.nul", CORE, "a path with a NUL byte is FS_NOT_FOUND naming the raw path";
    PathNameMax = "path.name-max", CORE, "a 255-byte component is a valid name (a file can be created under it)";
    PathNameTooLong = "path.name-too-long", CORE, "a 256-byte component is FS_NOT_FOUND";
    PathDotDotLexical = "path.dotdot-lexical", LINKS, "`..` after a symlinked directory collapses textually, not physically";
    PathParentIsFile = "path.parent-is-file", CORE, "resolving through a regular file is FS_NOT_FOUND";
    PathLoop = "path.loop", LINKS, "a symlink loop is FS_IO_ERROR with the fixed loop text";
    KeyAlias = "key.alias", LINKS, "two spellings of one object through a symlink get one key";
    KeyMissingUnderLink = "key.missing-under-link", LINKS, "a missing path under a symlinked directory is keyed under the real directory";
    TargetReused = "target.reused-after-change", CORE, "a target resolved earlier acts on what is at its key now, after the world changed";
    TargetParentNowFile = "target.parent-now-file", CORE, "a target resolved earlier whose parent has since become a regular file: stat finds nothing, reads and mutations fail coded, nothing changes";
    TargetKeyNowLink = "target.key-now-link", LINKS, "a target resolved earlier whose key has since become a live link: a write or an edit never follows it (FS_NOT_REGULAR_FILE)";
    StatFollows = "stat.follows-links", LINKS, "stat follows links to the object";
    StatDanglingAbsent = "stat.dangling-is-absent", LINKS, "stat of a dangling link is absent";
    StatDirNoSize = "stat.dir-no-size", CORE, "a directory has no size";
    LstatSymlink = "lstat.symlink", LINKS, "lstat names a link a symlink, with the length of its text";
    VersionRestoredMtime = "version.restored-mtime", CORE, "a same-size rewrite whose mtime was put back changes the version";
    VersionInPlace = "version.in-place-change", CORE, "an in-place change of a file (append, rewrite) changes its version";
    VersionChmod = "version.chmod", MODES, "a change of permission bits changes the version";
    VersionDirEntries = "version.dir-entries", CORE, "a directory whose entries changed has a new version";
    VersionFreshStat = "version.fresh-stat", CORE, "a mutation returns the version a fresh stat gives";
    ReadNulInWindow = "read.nul-in-window", CORE, "a NUL in the first 8192 bytes makes a read FS_NOT_TEXT";
    ReadNulWindowLastByte = "read.nul-window-last-byte", CORE, "a NUL at byte 8191 (the last of the window) makes a read FS_NOT_TEXT";
    ReadNulFirstPastWindow = "read.nul-first-past-window", CORE, "a NUL at byte 8192 (just outside the window) is text for a read";
    ReadNulPastWindow = "read.nul-past-window", CORE, "a NUL only past the window is text for a read";
    ReadInvalidUtf8 = "read.invalid-utf8", CORE, "invalid UTF-8 makes a read FS_NOT_TEXT";
    ReadBomHidden = "read.bom-hidden", CORE, "a read does not return a leading BOM";
    ReadMissing = "read.missing", CORE, "reading nothing is FS_NOT_FOUND";
    ReadNotRegular = "read.not-regular", CORE, "reading a directory is FS_NOT_REGULAR_FILE";
    ReadFifo = "read.fifo", CORE, "reading a FIFO is FS_NOT_REGULAR_FILE and does not block";
    ReadDanglingLink = "read.dangling-link", LINKS, "reading a dangling link is FS_NOT_FOUND";
    StreamEqualsRead = "stream.equals-read", CORE, "a stream concatenates to exactly the text a read returns";
    StreamMultiChunk = "stream.multi-chunk", CORE, "a stream of a file over 512 KiB (several chunks at any chunk size up to 256 KiB) equals the read";
    StreamSplitChar = "stream.split-char", CORE, "a stream of a file with multi-byte characters across every power-of-two boundary from 4 KiB to 512 KiB equals the read";
    StreamLateInvalid = "stream.late-invalid", CORE, "invalid UTF-8 past the first 256 KiB fails the stream FS_NOT_TEXT";
    BytesAtCap = "read-bytes.at-cap", BYTES, "a file of exactly `max` bytes is returned (the cap is inclusive)";
    BytesOneBelowCap = "read-bytes.one-below-cap", BYTES, "a file one byte under the cap is returned";
    BytesOneOverCap = "read-bytes.one-over-cap", BYTES, "a file one byte over the cap is FS_TOO_LARGE, never truncated";
    BytesBinary = "read-bytes.binary", BYTES, "read_bytes returns binary and invalid UTF-8 as they are";
    ListByteOrder = "list.byte-order", CORE, "a listing is in byte order where that differs from case-insensitive order";
    ListBrokenLink = "list.broken-link", LINKS, "a dangling or looping link is listed as other, without version or size";
    ListDirNoSize = "list.dir-no-size", CORE, "a listed directory has no size";
    ListNotDirectory = "list.not-directory", CORE, "listing a file is FS_NOT_DIRECTORY";
    ListMissing = "list.missing", CORE, "listing nothing is FS_NOT_FOUND";
    ListThroughLink = "list.through-link", LINKS, "a directory asked for through a link to it is listed";
    ListBig = "list.big", CORE, "a directory of thousands of entries is listed whole, in byte order, each entry with its kind and size, its first and last entries statted and read";
    ListLongNames = "list.long-names", CORE, "a directory of hundreds of names near the length limit is listed whole, in byte order";
    ResolveDeep = "resolve.deep", CORE, "a file 64 directories deep is resolved, listed, statted and read";
    WriteCreate = "write.create", CORE, "a write creates a file";
    WriteReplace = "write.replace", CORE, "an unguarded write replaces a file";
    WriteCreateIfAbsentExists = "write.create-if-absent-exists", CORE, "create-if-absent on an existing file is FS_NOT_OBSERVED, file untouched";
    WriteStale = "write.stale", CORE, "replace-if-version on a changed file is FS_STALE_VERSION, file untouched";
    WriteStaleMissing = "write.stale-missing", CORE, "replace-if-version on a missing file is FS_STALE_VERSION and does not recreate it";
    WriteReplaceAtVersion = "write.replace-at-version", CORE, "replace-if-version at the current version replaces";
    WriteDirectory = "write.directory", CORE, "writing a directory is FS_NOT_REGULAR_FILE";
    WriteDanglingLink = "write.dangling-link", LINKS, "writing a dangling link is FS_NOT_REGULAR_FILE, guarded or not; the link stays";
    WriteThroughLink = "write.through-link", LINKS, "a write through a live link lands on its target and the link stays a link";
    WriteParents = "write.creates-parents", CORE, "missing parent directories are created";
    WriteLongName = "write.long-name", CORE, "a file whose name is 200 to 255 bytes long is written and edited like any other (a staging name built from it must still fit)";
    WriteParentNotDir = "write.parent-not-directory", LINKS, "a write that would create its parent through a dangling link is FS_NOT_FOUND";
    WriteNewMode = "write.new-mode", MODES, "a new file is 0600";
    WriteKeepsMode = "write.keeps-mode", MODES, "a replaced file keeps its permission bits";
    WriteDiffBelow = "write.diff-basis-below", CORE, "content one byte under the diff-basis limit keeps `before`";
    WriteDiffAt = "write.diff-basis-at", CORE, "content exactly at the diff-basis limit drops `before`";
    WriteDiffAbove = "write.diff-basis-above", CORE, "content one byte over the diff-basis limit drops `before`";
    WriteBeforeBinary = "write.before-binary", CORE, "replacing a binary or invalid file has no `before`";
    WriteCompetitorFile = "write.competitor-file", CANCEL, "a file appearing mid-write is never replaced by create-if-absent (FS_NOT_OBSERVED); an unguarded write replaces it as an update of it";
    WriteCompetitorDir = "write.competitor-dir", CANCEL, "a directory appearing mid-write fails the write FS_NOT_REGULAR_FILE";
    WriteChangedMidWrite = "write.changed-mid-write", CANCEL, "a file changed by someone else between a version-guarded write's check and its publication (at before_stage or staged) fails it FS_STALE_VERSION, the change kept";
    EditChangedMidEdit = "edit.changed-mid-edit", CANCEL, "a file changed by someone else between an edit's read and its publication: a guarded edit is FS_STALE_VERSION, an unguarded one is made again on what is there now; the change is kept";
    WriteCompetitorLink = "write.competitor-link", CANCEL, "a dangling link appearing mid-write is never replaced";
    EditMissing = "edit.missing-is-stale", CORE, "editing nothing is FS_STALE_VERSION, even unguarded";
    EditStale = "edit.stale", CORE, "an edit at an old version is FS_STALE_VERSION, file untouched";
    EditVersionBeforeMatch = "edit.version-before-match", CORE, "a stale edit whose text is absent is FS_STALE_VERSION, not FS_EDIT_NOT_FOUND";
    EditNulPastWindow = "edit.nul-past-window", CORE, "a NUL anywhere (also past 8192 bytes) makes an edit FS_NOT_TEXT, even one whose old text matches";
    EditInvalidUtf8 = "edit.invalid-utf8", CORE, "invalid UTF-8 makes an edit FS_NOT_TEXT";
    EditEmptyOld = "edit.empty-old", CORE, "an empty old string is FS_EDIT_NOT_FOUND";
    EditNotFound = "edit.not-found", CORE, "an absent old string is FS_EDIT_NOT_FOUND";
    EditAmbiguous = "edit.ambiguous", CORE, "several matches without replace_all is FS_AMBIGUOUS_EDIT naming the count";
    EditReplaceAll = "edit.replace-all", CORE, "replace_all replaces every non-overlapping match";
    EditMixedEndings = "edit.keeps-mixed-endings", CORE, "an edit of a mixed-ending file keeps every untouched line ending";
    EditCrlfMatch = "edit.crlf-match", CORE, "a match across a CRLF line break replaces the whole break";
    EditInsertedStyle = "edit.inserted-breaks-take-style", CORE, "line breaks in the replacement take the file's dominant style";
    EditStyleWindow = "edit.style-window", CORE, "the dominant style is decided on the first 4096 characters only";
    EditKeepsBom = "edit.keeps-bom", CORE, "an edit keeps a leading BOM";
    EditLiteral = "edit.literal", CORE, "a replacement with `$&` or `$$` is inserted literally";
    EditDirectory = "edit.directory", CORE, "editing a directory is FS_NOT_REGULAR_FILE";
    EditThroughLink = "edit.through-link", LINKS, "an edit through a live link changes the target and keeps the link";
    EditKeepsMode = "edit.keeps-mode", MODES, "an edited file keeps its permission bits";
    CancelResolve = "cancel.resolve", CORE, "resolve with a cancelled signal is FS_ABORTED";
    CancelStat = "cancel.stat", CORE, "stat with a cancelled signal is FS_ABORTED";
    CancelLstat = "cancel.lstat", CORE, "lstat with a cancelled signal is FS_ABORTED";
    CancelReadText = "cancel.read-text", CORE, "read_text with a cancelled signal is FS_ABORTED";
    CancelStreamText = "cancel.stream-text", CORE, "stream_text with a cancelled signal is FS_ABORTED";
    CancelReadBytes = "cancel.read-bytes", BYTES, "read_bytes with a cancelled signal is FS_ABORTED";
    CancelListDir = "cancel.list-dir", CORE, "list_dir with a cancelled signal is FS_ABORTED";
    CancelWrite = "cancel.write", CORE, "write_text with a cancelled signal is FS_ABORTED and changes nothing";
    CancelEdit = "cancel.edit", CORE, "edit_text with a cancelled signal is FS_ABORTED and changes nothing";
    CancelBeforeStage = "cancel.before-stage", CANCEL, "a mutation cancelled before staging leaves no trace";
    CancelStaged = "cancel.staged", CANCEL, "a mutation cancelled with its content staged leaves no trace";
    CancelCommitted = "cancel.committed", CANCEL, "a mutation cancelled after publication reports success";
    CancelCreatedParents = "cancel.created-parents", CANCEL, "a cancelled write removes the parent directories it created";
    FactsProcessPath = "facts.process-path", CORE, "process_path is the real path in the provider's world";
    FactsFileUrl = "facts.file-url", CORE, "file_url is a percent-encoded file:// URL of process_path";
    FactsFileUrlEscapes = "facts.file-url-escapes", CORE, "a file URL percent-encodes `?`, `#`, `%` and space in names";
    FactsContains = "facts.contains", CORE, "contains is true for an object beneath a directory (over the wire the client decides it from the process paths the backend gave)";
    FactsContainsPrefix = "facts.contains-sibling", CORE, "contains is false for a sibling whose name extends the parent's (`d` and `dd`)";
    FactsContainsAlias = "facts.contains-alias", LINKS, "contains follows identity through a link alias";
    StagingPrivate = "staging.private", STAGING, "staged content is 0700/0600 while it exists";
    StagingNotClobbered = "staging.not-clobbered", STAGING, "a pre-existing entry at the staging name is never touched";
    RaceOneWinner = "race.one-winner", CORE, "concurrent guarded mutations at one version have exactly one winner";
    RaceAcrossInstances = "race.across-instances", SHARED, "concurrent guarded mutations at one version through two provider instances over one storage have exactly one winner";
    Linearizable = "concurrency.linearizable", CORE, "a batch of operations run at the same time has outcomes and a final state that some sequential order of them explains";
    LinearizableAcrossInstances = "concurrency.linearizable-across-instances", SHARED, "a batch run at the same time through two provider instances over one storage is explained by some sequential order";
    VisibilityWhole = "visibility.whole", CORE, "readers running during large writes and edits see the old or the new content, never an empty, partial or mixed file";
    VisibilityListing = "visibility.listing", CORE, "a directory listed while writes and edits in it run shows its entries as before or after each, and beside them nothing but the staging the backend reported";
    PermissionDenied = "permission.denied", PERMS, "what the OS refuses is FS_PERMISSION_DENIED, naming the path, changing nothing";
    ClaimReadBytes = "claim.read-bytes", CORE, "read_bytes works when claimed and returns no content when not";
    ClaimNamespace = "claim.namespace", CORE, "create_dir and remove work when namespace is claimed, and change nothing when not";
    ClaimCancelPoints = "claim.cancel-points", CORE, "checkpoints are shown in order when claimed and never when not";
    ClaimStagingProbe = "claim.staging-probe", CORE, "staging paths are reported and exist when claimed, and are empty when not";
    ClaimSandboxMode = "claim.sandbox-mode", CORE, "sandbox_mode() is set exactly when sandbox modes are claimed";
    ClaimModes = "claim.modes", CORE, "a world that keeps permission bits reads back the mode it gave a file; one that says it keeps none reports none, and modes is not claimed";
    SandboxReadOnly = "sandbox.read-only", SANDBOX, "read-only denies writes and edits with FS_SANDBOX_DENIED and changes nothing";
    SandboxFullAccess = "sandbox.full-access", SANDBOX, "danger-full-access and a workspace-write root that holds the target allow the mutation";
    SandboxWayOutDenied = "sandbox.way-out-denied", SANDBOX, "under workspace-write a mutation whose path leads out (a link of any kind, `..`, a sibling prefix) is FS_SANDBOX_DENIED and changes nothing anywhere";
    SandboxSwappedLinkDenied = "sandbox.swapped-link-denied", SANDBOX, "a directory swapped for a link to outside after the target was resolved is not followed out";
    SandboxSwapRace = "sandbox.swap-race", SANDBOX, "writes and edits racing a directory swapped for a link to outside and back never change anything outside";
    SandboxContainedLands = "sandbox.contained-lands", SANDBOX, "a mutation that stays inside the workspace (through links and `..` that stay in) lands where it leads";
    FenceDefaultDecides = "fence.default-decides", SANDBOX, "a mutation without a call policy outside the deployment's workspace is decided by the deployment's mode: denied under read-only and workspace-write, let through under danger-full-access";
    FenceCallOverrides = "fence.call-overrides", SANDBOX, "a call's own policy decides over the deployment's default: it denies what the default lets through, or lets through what the default denies";
    FenceOutsideDenied = "fence.outside-denied", SANDBOX, "under workspace-write a target whose real path is outside the call's workspace is FS_SANDBOX_DENIED and changes nothing anywhere";
    FenceLeavesDenied = "fence.leaves-denied", SANDBOX, "a target beneath the workspace whose path leads out when the mutation looks at it (a dangling link pointing out, a directory swapped for a link to outside after resolution) is FS_SANDBOX_DENIED, never followed out";
    FenceNoRootDenied = "fence.no-root-denied", SANDBOX, "a workspace that does not exist matches nothing: a workspace-write mutation under it is FS_SANDBOX_DENIED";
    FenceBeneathAllowed = "fence.beneath-allowed", SANDBOX, "a mutation beneath a workspace below the test root lands where it leads, everything beside the workspace unchanged";
    CrashOldOrNew = "crash.old-or-new", CORE, "after the backend is killed (SIGKILL) mid-write or mid-edit, the file holds exactly its old or its new content, byte for byte, with its mode";
    CrashAtCheckpoint = "crash.at-checkpoint", CANCEL, "a kill while a mutation waits at one of its checkpoints leaves the file old or new";
    CrashRecoveredWrite = "crash.recovered-write", CORE, "after a kill, a fresh instance reads the file and a write guarded by the version it read succeeds";
    CrashListedUnswept = "crash.listed-unswept", CORE, "a fresh instance lists the file's directory right after a kill, before any writer sweeps: it shows the file and nothing the killed backend left";
    CrashSwept = "crash.swept", CORE, "what a killed backend left beside the file (staging) is gone once the next writer has written, in the world and in a listing";
    PowerLossAnswered = "power-loss.answered", DURABLE, "after a power cut, every write, edit, removal, rename and new directory that answered before it is there, whole (a FUSE layer keeps only what was fsynced: file data at the file's fsync, entries at the directory's)";
    PowerLossOldOrNew = "power-loss.old-or-new", DURABLE, "after a power cut in the middle of a mutation, what it touched is as before it or as after it, never torn or empty";
    PowerLossListedHidden = "power-loss.listed-hidden", DURABLE, "right after a power cut, before anyone writes, a listing shows nothing a cut publication left";
    PowerLossSwept = "power-loss.swept", DURABLE, "what a publication cut by a power loss left is gone once the next writer has written in its directory";
    ReadFenceWayOutDenied = "read-fence.way-out-denied", READS, "under a deployment that confines reads, stat, lstat, read, stream, read_bytes and list through a way out of the workspace (`..`, an absolute path, links out of every kind, a sibling whose name extends the workspace's) are FS_SANDBOX_DENIED naming the read, and return nothing";
    ReadFenceInsideReads = "read-fence.inside-reads", READS, "under a deployment that confines reads, reads that stay beneath the workspace (through links that stay in) read what is there";
    ReadFenceListingHidesOut = "read-fence.listing-hides-out", READS, "a listing of the workspace shows a link that leads out as nothing there: other, no version, no size, keyed by its own path";
    ReadFenceSwappedDenied = "read-fence.swapped-denied", READS, "a read of a target resolved beneath the workspace whose directory was then swapped for a link to outside is FS_SANDBOX_DENIED, never followed out";
    ReadFenceRaceHeld = "read-fence.race-held", READS, "reads racing a directory swapped for a link to outside and back never return the outside (and some are denied)";
    PolicyUnobservedRefused = "policy.unobserved-refused", CORE, "a tool write or edit of an existing file its session has not observed at its current version is refused, the file untouched";
    PolicyOwnersSeparate = "policy.owners-separate", CORE, "what one session observed never authorises another";
    PolicyStaleUnchanged = "policy.stale-unchanged", CORE, "a stale tool write or edit leaves the file as it was";
    PolicyRemedy = "policy.remedy", CORE, "after FS_STALE_VERSION, a re-read and a retry succeed when nothing else changed";
    PolicyRecreateAfterDelete = "policy.recreate-after-delete", CORE, "after a deleted file made a mutation stale, a re-read that finds nothing lets a write recreate it";
    PolicyWindowedReadAuthorises = "policy.windowed-read", CORE, "a windowed read authorises an edit while the file is unchanged";
    MkdirCreated = "mkdir.created", NAMES, "create_dir makes a directory where nothing was, and its parent's version changes";
    MkdirParents = "mkdir.parents", NAMES, "create_dir with parents makes every missing directory on the way; without it a missing parent is FS_NOT_FOUND";
    MkdirExists = "mkdir.exists", NAMES, "an existing directory is a success with exist_ok and FS_NOT_OBSERVED without it";
    MkdirInTheWay = "mkdir.in-the-way", NAMES, "a file or a link where a directory is asked for is FS_NOT_DIRECTORY, and stays";
    RemoveFile = "remove.file", NAMES, "remove takes a file away and its parent's version changes";
    RemoveLinkNotTarget = "remove.link-not-target", NAMES, "remove of a link removes the link, never what it points to";
    RemoveStale = "remove.stale", NAMES, "a remove guarded by a version the entry no longer has is FS_STALE_VERSION and removes nothing";
    RemoveDirectory = "remove.directory", NAMES, "an empty directory is removed only when asked; one with entries never is";
    RenameMoves = "rename.moves", NAMES, "rename moves the entry: the destination holds the source's bytes and mode, the source is gone, nothing else changed";
    RenameNoReplace = "rename.no-replace", NAMES, "a rename without a replace guard onto an existing entry is FS_NOT_OBSERVED and changes nothing";
    RenameReplaceGuarded = "rename.replace-guarded", NAMES, "a rename replaces a destination only at the version the caller observed; a stale one is FS_STALE_VERSION";
    RenameStaleSource = "rename.stale-source", NAMES, "a rename guarded by a version the source no longer has is FS_STALE_VERSION";
    RenameLinkAsLink = "rename.link-as-link", NAMES, "a link is moved as a link, its text unchanged";
    RenameDirectory = "rename.directory", NAMES, "a directory is moved with everything in it, keeping their versions";
    RenameIntoItself = "rename.into-itself", NAMES, "a directory moved to itself or beneath itself is refused";
    CrashRenameOneOf = "crash.rename-one-of", NAMES, "after a kill during renames, every file is at its source or its destination — never both, never neither — whole, with its mode, and nothing else is left";
    LinearizableNamespace = "concurrency.linearizable-namespace", NAMES, "a batch with removes and renames run beside writes, edits and reads is explained by some sequential order of the model";
    RaceNamespace = "race.namespace", NAMES, "concurrent guarded writes, removes and renames of one file at one version have exactly one winner, every loser FS_STALE_VERSION";
    SandboxNamespaceDenied = "sandbox.namespace-denied", SANDBOX, "a create_dir, remove or rename that leads out at either end (a link out, `..`, a sibling prefix) is FS_SANDBOX_DENIED naming that end, and changes nothing";
    SandboxNamespaceLinkInside = "sandbox.namespace-link-inside", SANDBOX, "removing or moving a link that points out touches the link alone, inside the workspace";
    CancelNamespace = "cancel.namespace", CANCEL, "a create_dir, remove or rename cancelled at its before_stage checkpoint fails FS_ABORTED and changes nothing; at committed it has happened";
    NamespaceFenced = "namespace.fenced", SANDBOX, "a fencing backend decides each end of a namespace operation on its parent's real path";
}

impl Rule {
    /// Whether the rule is part of the core contract (needs no capability and is not about the
    /// agent side).
    pub fn is_core(self) -> bool {
        self.needs().is_none() && !self.is_agent()
    }

    /// Whether the rule is about the agent side (the tools and the read-before-write policy):
    /// it applies only to a run given an agent surface.
    pub fn is_agent(self) -> bool {
        self.id().starts_with("policy.")
    }

    /// A second capability the rule needs beside [`Rule::needs`]: a link competitor needs links
    /// as well as cancel points (the generator makes one only when both are claimed — a backend
    /// with cancel points and no links could never reach it, as the Python adapter showed), and
    /// private staging needs modes as well as the staging probe (its property checks them).
    pub fn also_needs(self) -> Option<Capability> {
        match self {
            Rule::WriteCompetitorLink => Some(Capability::Symlinks),
            // The staged entry's modes are only checked for a backend that keeps modes.
            Rule::StagingPrivate => Some(Capability::Modes),
            Rule::RemoveLinkNotTarget | Rule::RenameLinkAsLink => Some(Capability::Symlinks),
            Rule::CancelNamespace
            | Rule::NamespaceFenced
            | Rule::SandboxNamespaceDenied
            | Rule::SandboxNamespaceLinkInside => Some(Capability::Namespace),
            _ => None,
        }
    }

    /// Whether the rule needs contents around the backend's diff-basis limit, which the suite
    /// writes only for a limit of at most 1 MiB.
    pub fn needs_small_diff_limit(self) -> bool {
        matches!(
            self,
            Rule::WriteDiffBelow | Rule::WriteDiffAt | Rule::WriteDiffAbove
        )
    }

    /// Parses an id given by [`Rule::id`].
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| r.id() == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        for r in Rule::ALL {
            assert_eq!(Rule::from_id(r.id()), Some(*r));
            assert!(!r.text().is_empty());
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
    }
}
