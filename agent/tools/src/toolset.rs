//! The composition of the tools for one filesystem world: which tools exist, with which
//! schemas, and the system prompt that goes with them.
//!
//! Whether `write` and `edit` offer sandbox escalation depends on the provider (only a
//! confining one), whether `read_image` exists depends on the composition (only with an image
//! sink), and whether `glob` and `grep` exist depends on the provider (only one that offers
//! [`seam::Search`]) — so the toolset is built from those facts, once, and serves every session.

use crate::config::ReadConfig;
use crate::edit::EditTool;
use crate::editor::StrReplaceEditorTool;
use crate::glob::GlobTool;
use crate::grep::GrepTool;
use crate::read::ReadTool;
use crate::read_image::{ImageSink, ReadImageTool};
use crate::sandbox::Approver;
use crate::search::SpillStore;
use crate::tool::{PromptSection, Tool};
use crate::write::WriteTool;
use seam::FileSystem;
use std::sync::Arc;

/// The tools of one composition.
#[derive(Clone)]
pub struct Toolset {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for Toolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// Builds a [`Toolset`].
pub struct ToolsetBuilder {
    confining: bool,
    read: ReadConfig,
    approver: Option<Arc<dyn Approver>>,
    image_sink: Option<Arc<dyn ImageSink>>,
    searchable: bool,
    spill: Option<Arc<dyn SpillStore>>,
    editor: bool,
    extended: bool,
    namespace: bool,
}

impl Toolset {
    /// Starts a toolset for tools acting on `fs` (it decides whether escalation is offered).
    pub fn builder(fs: &dyn FileSystem) -> ToolsetBuilder {
        ToolsetBuilder {
            confining: fs.sandbox_mode().is_some(),
            read: ReadConfig::default(),
            approver: None,
            image_sink: None,
            searchable: fs.search().is_some(),
            spill: None,
            editor: false,
            extended: false,
            namespace: fs.capabilities().namespace,
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Every tool, in registration order (read, write, edit, then read_image, glob and grep if
    /// present).
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// The same toolset with only the tools `keep` accepts (a read-only deployment, say, that
    /// lists only the tools whose [`effects`](Tool::effects) are read-only).
    pub fn retain(mut self, keep: impl Fn(&dyn Tool) -> bool) -> Self {
        self.tools.retain(|t| keep(t.as_ref()));
        self
    }

    /// The tools' names.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The tools' prompt sections, in their order.
    pub fn prompt_sections(&self) -> Vec<PromptSection> {
        let mut sections: Vec<PromptSection> = self
            .tools
            .iter()
            .filter_map(|t| t.prompt_section())
            .collect();
        sections.sort_by_key(|s| s.order);
        sections
    }

    /// The sections joined into one block of system prompt (a blank line between sections).
    pub fn system_prompt(&self) -> String {
        self.prompt_sections()
            .iter()
            .map(|s| s.text)
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

impl ToolsetBuilder {
    /// The read tool's limits.
    pub fn read_config(mut self, config: ReadConfig) -> Self {
        self.read = config;
        self
    }

    /// Who approves sandbox escalations (without one they fail closed).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Where images go; registers `read_image`.
    pub fn image_sink(mut self, sink: Arc<dyn ImageSink>) -> Self {
        self.image_sink = Some(sink);
        self
    }

    /// Where `glob` and `grep` save the complete result of an over-cap search.
    pub fn spill_store(mut self, store: Arc<dyn SpillStore>) -> Self {
        self.spill = Some(store);
        self
    }

    /// Also registers `str_replace_editor` (after the others).
    pub fn str_replace_editor(mut self) -> Self {
        self.editor = true;
        self
    }

    /// Also registers what a file server offers beyond the seed's tools — `list`, `tree`,
    /// `info`, `read_many` and `roots`, and — for a provider that claims the namespace
    /// operations — `create_directory`, `move` and `delete` — and gives `write` and `edit` a
    /// `dry_run` argument (the diff, nothing changed).
    pub fn extended(mut self) -> Self {
        self.extended = true;
        self
    }

    /// The toolset.
    pub fn build(self) -> Toolset {
        let mut tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ReadTool::new(self.read)),
            Arc::new(
                WriteTool::new(self.confining, self.approver.clone()).with_dry_run(self.extended),
            ),
            Arc::new(EditTool::new(self.confining, self.approver).with_dry_run(self.extended)),
        ];
        if let Some(sink) = self.image_sink {
            tools.push(Arc::new(ReadImageTool::new(sink)));
        }
        if self.searchable {
            tools.push(Arc::new(GlobTool::new(self.spill.clone())));
            tools.push(Arc::new(GrepTool::new(self.spill)));
        }
        if self.editor {
            tools.push(Arc::new(StrReplaceEditorTool::new()));
        }
        if self.extended {
            tools.push(Arc::new(crate::list::ListTool::new()));
            tools.push(Arc::new(crate::list::TreeTool::new()));
            tools.push(Arc::new(crate::info::InfoTool::new()));
            tools.push(Arc::new(crate::info::ReadManyTool::new(ReadTool::new(
                self.read,
            ))));
            tools.push(Arc::new(crate::info::RootsTool::new()));
            if self.namespace {
                tools.push(Arc::new(crate::namespace::CreateDirectoryTool::new()));
                tools.push(Arc::new(crate::namespace::MoveTool::new()));
                tools.push(Arc::new(crate::namespace::DeleteTool::new()));
            }
        }
        Toolset { tools }
    }
}
