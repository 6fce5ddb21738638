//! Deliberately broken variants of the provider. They exist so the conformance suite can prove,
//! in its own test run, that it catches each of these classic mistakes.

/// One classic mistake, switched on in [`crate::LocalConfig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The version token leaves out ctime, so a same-size rewrite with a restored mtime is
    /// invisible to the stale guard.
    VersionWithoutCtime,
    /// Create-if-absent checks for the file, then publishes with a plain rename that replaces
    /// whatever appeared meanwhile.
    CheckThenRename,
    /// An edit rewrites the whole file in its dominant line-ending style (the seed's behaviour).
    EditNormalisesEndings,
    /// Listings are sorted case-insensitively, like a locale collation, not by bytes.
    LocaleOrderedListing,
    /// An unguarded write to a dangling link replaces the link with a file.
    ReplacesDanglingLink,
    /// An edit writes the file back without its byte-order mark.
    DropsBomOnEdit,
    /// Staging is created world-readable (0755 directory, 0644 file).
    WorldReadableStaging,
    /// Replace-if-version only checks that the file exists, not its version.
    IgnoresVersionGuard,
    /// An edit looks for NUL only in the first 8192 bytes, like a read.
    EditSamplesNul,
}

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 9] = [
        Fault::VersionWithoutCtime,
        Fault::CheckThenRename,
        Fault::EditNormalisesEndings,
        Fault::LocaleOrderedListing,
        Fault::ReplacesDanglingLink,
        Fault::DropsBomOnEdit,
        Fault::WorldReadableStaging,
        Fault::IgnoresVersionGuard,
        Fault::EditSamplesNul,
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Fault::VersionWithoutCtime => "version-without-ctime",
            Fault::CheckThenRename => "check-then-rename",
            Fault::EditNormalisesEndings => "edit-normalises-endings",
            Fault::LocaleOrderedListing => "locale-ordered-listing",
            Fault::ReplacesDanglingLink => "replaces-dangling-link",
            Fault::DropsBomOnEdit => "drops-bom-on-edit",
            Fault::WorldReadableStaging => "world-readable-staging",
            Fault::IgnoresVersionGuard => "ignores-version-guard",
            Fault::EditSamplesNul => "edit-samples-nul",
        }
    }

    /// Parses a name given by [`Fault::name`].
    pub fn from_name(name: &str) -> Option<Fault> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}
