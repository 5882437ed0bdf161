//! Tasks run by the stub agent (`support/stub_agent.py`, which talks to the real `berth hook
//! claude` and `berth task report`): one builder for the `berth task start` the suites repeat.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{berth_bin, TestServer};

/// The Python that runs the stub agent: the system's, else the first on `PATH`.
pub fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// The stub agent's script.
pub fn stub_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/support/stub_agent.py")
}

/// A `berth task start --json` of a task on a repo, worked by the stub agent; built up, then
/// [`StubTask::start`]ed (or its [`StubTask::args`] run some other way).
pub struct StubTask {
    repo: PathBuf,
    label: Option<String>,
    objective: String,
    accept: Option<String>,
    task_args: Vec<String>,
    stub_args: Vec<String>,
    log: PathBuf,
}

impl StubTask {
    /// A task on `repo` whose objective is "Add the file new.txt", its stub logging to
    /// `<log_name>.log` in the server's temp dir.
    pub fn new(server: &TestServer, repo: &Path, log_name: &str) -> StubTask {
        StubTask {
            repo: repo.to_owned(),
            label: None,
            objective: "Add the file new.txt".to_owned(),
            accept: None,
            task_args: Vec::new(),
            stub_args: Vec::new(),
            log: server.root.path().join(format!("{log_name}.log")),
        }
    }

    /// [`StubTask::new`] labelled `label` (the stub's log named after it too).
    pub fn labelled(server: &TestServer, repo: &Path, label: &str) -> StubTask {
        StubTask { label: Some(label.to_owned()), ..StubTask::new(server, repo, label) }
    }

    /// The task's objective.
    pub fn objective(mut self, text: &str) -> StubTask {
        text.clone_into(&mut self.objective);
        self
    }

    /// One acceptance criterion.
    pub fn accept(mut self, text: &str) -> StubTask {
        self.accept = Some(text.to_owned());
        self
    }

    /// More options of `berth task start` (`--request-id`, `--silence` …).
    pub fn task_args(mut self, args: &[&str]) -> StubTask {
        self.task_args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// More options of the stub (`--turn-ms`, `--on-submit` …).
    pub fn stub_args(mut self, args: &[&str]) -> StubTask {
        self.stub_args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// Where the stub writes its log (one JSON event a line).
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The arguments of `berth` that start the task.
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = ["task", "start", "--json", "--repo"].map(String::from).into();
        args.push(self.repo.display().to_string());
        args.extend(["--agent", "claude", "--objective", &self.objective].map(String::from));
        if let Some(accept) = &self.accept {
            args.extend(["--accept".to_owned(), accept.clone()]);
        }
        if let Some(label) = &self.label {
            args.extend(["--label".to_owned(), label.clone()]);
        }
        args.extend(self.task_args.iter().cloned());
        args.extend(["--", python()].map(String::from));
        args.push(stub_script().display().to_string());
        args.extend(["--berth".to_owned(), berth_bin().display().to_string()]);
        args.extend(["--log".to_owned(), self.log.display().to_string()]);
        args.extend(self.stub_args.iter().cloned());
        args
    }

    /// Starts the task; panics unless `berth task start` succeeds. Returns the task's JSON.
    pub fn start(&self, server: &TestServer) -> Value {
        let args = self.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = server.berth_ok(&args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("task start --json: {e}: {out}"))
    }
}
