//! `scripts/agent-versions` reads the pins from the install scripts and sets them beside the
//! newest releases. npm is a stand-in on `PATH` that answers from a fixed table (and logs what it
//! was asked), so every answer is known and no network is used.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::tree::Tree;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/agent-versions");

/// The stand-in npm: `view PKG version` answers `latest[PKG]` (E404 for others), `pack
/// code-server@V` writes a package whose `lib/vscode/product.json` says `vscode(V)` (a bash
/// expression of `$v`), and `offline` fails every call as npm does without a network.
fn fake_npm(t: &Tree, latest: &[(&str, &str)], vscode: &str, offline: bool) -> PathBuf {
    let answers: String = latest.iter().map(|(p, v)| format!("      {p}) echo {v} ;;\n")).collect();
    let body = if offline {
        "printf 'npm error code ENOTFOUND\\nnpm error syscall getaddrinfo\\nnpm error network request failed\\n' >&2\nexit 1\n"
            .to_string()
    } else {
        format!(
            r#"case ${{args[0]}} in
  view)
    case ${{args[1]}} in
{answers}      *) printf 'npm error code E404\nnpm error 404 Not Found\n' >&2; exit 1 ;;
    esac ;;
  pack)
    v=${{args[1]#code-server@}}
    mkdir -p package/lib/vscode
    printf '{{"nameShort":"code-server","version":"%s"}}\n' "{vscode}" > package/lib/vscode/product.json
    tar -czf "code-server-$v.tgz" package && rm -rf package
    echo "code-server-$v.tgz" ;;
  *) exit 3 ;;
esac
"#
        )
    };
    let log = t.path("npm.log");
    let npm = t.write(
        "bin/npm",
        format!(
            "#!/usr/bin/env bash\necho \"$*\" >> '{}'\nargs=()\nfor a in \"$@\"; do [[ $a == -* ]] || args+=(\"$a\"); done\n{body}",
            log.display()
        ),
    );
    std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).expect("chmod npm");
    t.path("bin")
}

/// `agent-versions ARGS` as found at `script`, with the stand-in npm first on PATH.
/// (The script was just written: while another test's thread forks, its child may hold the file
/// open for writing until it execs, and running it fails with "text file busy" meanwhile; it is
/// tried again.)
fn run(t: &Tree, script: &Path, args: &[&str]) -> Output {
    let path = format!("{}:{}", t.path("bin").display(), std::env::var("PATH").unwrap_or_default());
    let mut tries = 0;
    loop {
        let ran = Command::new(script)
            .args(args)
            .env("PATH", &path)
            .env("AGENT_VERSIONS_CACHE", t.path("cache"))
            .env("HOME", t.home())
            .env_remove("CODE_SERVER_VERSION")
            .output();
        match ran {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            ran => return ran.expect("run scripts/agent-versions"),
        }
    }
}

/// A repository of its own: the real script beside install scripts with known pins.
fn repo(t: &Tree, install_agents: &str, install_code_server: &str) -> PathBuf {
    let script = t.write("repo/scripts/agent-versions", std::fs::read(SCRIPT).expect("read the script"));
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    t.write("repo/scripts/install-agents.sh", install_agents);
    t.write("repo/scripts/install-code-server.sh", install_code_server);
    script
}

/// The table's rows by package: (pinned, newest, status, marked with `*`), cut at the columns
/// of its header line.
fn rows(stdout: &str) -> BTreeMap<String, (String, String, String, bool)> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("  agent "));
    let header = lines.next().unwrap_or_else(|| panic!("no table: {stdout}"));
    let at =
        |name: &str| header.find(&format!("  {name}")).map(|i| i + 2).unwrap_or_else(|| panic!("no {name} column"));
    let (package, pinned, newest) = (at("package"), at("pinned"), at("newest"));
    let cell = |line: &str, from: usize, to: usize| line.get(from..to.min(line.len())).unwrap_or("").trim().to_string();
    let mut rows = BTreeMap::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let rest: Vec<&str> = line.get(newest..).unwrap_or("").split_whitespace().collect();
        rows.insert(
            cell(line, package, pinned),
            (
                cell(line, pinned, newest),
                rest.first().unwrap_or(&"").to_string(),
                rest.get(1).unwrap_or(&"").to_string(),
                line.starts_with("* "),
            ),
        );
    }
    rows
}

/// The agents `scripts/install-agents.sh` pins, by package.
const AGENT_PACKAGES: [&str; 5] = [
    "@openai/codex",
    "@anthropic-ai/claude-code",
    "@google/gemini-cli-core",
    "opencode-ai",
    "@deepseek-ai/dsh-agent-instructions",
];

fn row(pinned: &str, newest: &str, status: &str) -> (String, String, String, bool) {
    (pinned.into(), newest.into(), status.into(), !status.is_empty())
}

const INSTALL_AGENTS: &str = "#!/usr/bin/env bash
# Once @openai/codex@0.1.0; a comment is not a pin.
pins=(
  @openai/codex@0.171.0
  @anthropic-ai/claude-code@2.1.332
  opencode-ai@1.18.33
  @google/gemini-cli-core@0.61.0
  @deepseek-ai/dsh-agent-instructions@0.1.0-rc.8
  left-pad@1.3.0
)
for pin in \"${pins[@]}\"; do specs+=(\"${pin%@*}@latest\"); done
";

#[test]
fn agent_versions_marks_the_pins_that_differ_from_the_newest_release() {
    let t = Tree::new();
    let script = repo(
        &t,
        INSTALL_AGENTS,
        "#!/usr/bin/env bash\n# code-server 4.100.x was the last on Node 20\nversion=${CODE_SERVER_VERSION:-4.139.1}\n",
    );
    // The profile's `mirrors` string names another release than the pin: said in a note.
    t.write("repo/src/chain/agents/codex.rs", "Profile {\n        mirrors: \"Codex CLI 0.170.0\",\n}\n");
    fake_npm(
        &t,
        &[
            ("@openai/codex", "0.171.0"),
            ("@anthropic-ai/claude-code", "2.1.400"),
            // Not lexical: 1.9.0 is older than 1.18.33.
            ("opencode-ai", "1.9.0"),
            // A pre-release comes before its release.
            ("@deepseek-ai/dsh-agent-instructions", "0.1.0"),
            ("left-pad", "1.3.0"),
            ("code-server", "4.140.0"),
        ],
        "1.${v#4.}",
        false,
    );
    let out = run(&t, &script, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let want: BTreeMap<String, _> = [
        ("@openai/codex", row("0.171.0", "0.171.0", "")),
        ("@anthropic-ai/claude-code", row("2.1.332", "2.1.400", "behind")),
        ("@google/gemini-cli-core", row("0.61.0", "?", "")),
        ("opencode-ai", row("1.18.33", "1.9.0", "ahead")),
        ("@deepseek-ai/dsh-agent-instructions", row("0.1.0-rc.8", "0.1.0", "behind")),
        ("left-pad", row("1.3.0", "1.3.0", "")),
        ("code-server", row("4.139.1", "4.140.0", "behind")),
        ("(lib/vscode/product.json)", row("1.139.1", "1.140.0", "behind")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(rows(&stdout), want, "{stdout}");
    assert!(
        stdout
            .contains("note: Gemini CLI, core library (@google/gemini-cli-core), newest release: not known: not found"),
        "{stdout}"
    );
    assert!(stdout.contains("\"Codex CLI 0.170.0\", not 0.171.0"), "{stdout}");
    assert!(stdout.contains("Gemini CLI, core library  gemini"), "the row says it is the core library: {stdout}");

    // --check fails on a pin behind; the VS Code answers come from the cache the first run filled.
    let out = run(&t, &script, &["--check"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(rows(&String::from_utf8_lossy(&out.stdout)), want);
    let log = std::fs::read_to_string(t.path("npm.log")).expect("npm.log");
    assert_eq!(log.lines().filter(|l| l.starts_with("pack ")).count(), 2, "{log}");

    // Nothing behind (a pin ahead of `latest` is marked, not a failure): --check passes.
    fake_npm(
        &t,
        &[
            ("@openai/codex", "0.171.0"),
            ("@anthropic-ai/claude-code", "2.1.332"),
            ("@google/gemini-cli-core", "0.61.0"),
            ("opencode-ai", "1.9.0"),
            ("@deepseek-ai/dsh-agent-instructions", "0.1.0-rc.8"),
            ("left-pad", "1.3.0"),
            ("code-server", "4.139.1"),
        ],
        "1.${v#4.}",
        false,
    );
    let out = run(&t, &script, &["--check"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(rows(&stdout)["opencode-ai"], row("1.18.33", "1.9.0", "ahead"), "{stdout}");
    assert_eq!(rows(&stdout)["code-server"], row("4.139.1", "4.139.1", ""), "{stdout}");
}

#[test]
fn agent_versions_reads_the_pins_of_this_repositorys_install_scripts() {
    let t = Tree::new();
    fake_npm(
        &t,
        &[
            ("@openai/codex", "1000.0.0"),
            ("@anthropic-ai/claude-code", "1000.0.0"),
            ("@google/gemini-cli-core", "1000.0.0"),
            ("opencode-ai", "1000.0.0"),
            ("@deepseek-ai/dsh-agent-instructions", "1000.0.0"),
            ("code-server", "1000.0.0"),
        ],
        // A version that names the package it came from.
        "9.9.${v//./}",
        false,
    );
    let out = run(&t, Path::new(SCRIPT), &["--check"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "every pin is behind 1000.0.0: {stdout}");
    let rows = rows(&stdout);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let agents = std::fs::read_to_string(root.join("scripts/install-agents.sh")).expect("install-agents.sh");
    for package in AGENT_PACKAGES {
        let (pinned, newest, status, _) = rows.get(package).unwrap_or_else(|| panic!("no row for {package}: {stdout}"));
        let pin = format!("{package}@{pinned}");
        assert!(
            agents.lines().any(|l| !l.trim_start().starts_with('#') && l.split_whitespace().any(|w| w == pin)),
            "{pin} is not what scripts/install-agents.sh installs: {stdout}"
        );
        assert_eq!((newest.as_str(), status.as_str()), ("1000.0.0", "behind"), "{package}: {stdout}");
    }
    let code_server =
        std::fs::read_to_string(root.join("scripts/install-code-server.sh")).expect("install-code-server.sh");
    let (pinned, _, status, _) = &rows["code-server"];
    assert!(
        code_server.lines().any(|l| l.starts_with("version=") && l.contains(pinned.as_str())),
        "code-server {pinned} is not install-code-server.sh's version= line: {stdout}"
    );
    assert_eq!(status, "behind", "{stdout}");
    // What the VS Code row says is what the package's product.json says.
    assert_eq!(rows["(lib/vscode/product.json)"].0, format!("9.9.{}", pinned.replace('.', "")), "{stdout}");
}

#[test]
fn agent_versions_says_per_agent_when_the_registry_cannot_be_reached() {
    let t = Tree::new();
    let script = repo(&t, INSTALL_AGENTS, "version=4.100.3\n");
    fake_npm(&t, &[], "", true);
    // Not knowing is not a failure, even with --check: only a pin known to be behind is.
    let out = run(&t, &script, &["--check"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for package in AGENT_PACKAGES.into_iter().chain(["left-pad", "code-server"]) {
        assert_eq!(rows(&stdout)[package].1, "?", "{stdout}");
        assert!(
            stdout.lines().any(|l| l.starts_with("note: ")
                && l.contains(&format!(
                    "({package}), newest release: not known: the registry cannot be reached (npm: ENOTFOUND)"
                ))),
            "no note for {package}: {stdout}"
        );
    }
    assert!(
        stdout.contains("note: the VS Code in code-server@4.100.3: not known: the registry cannot be reached"),
        "{stdout}"
    );
}

#[test]
fn agent_versions_fails_when_a_pin_cannot_be_read() {
    let t = Tree::new();
    // The code-server pin moved out of a `version=` line.
    let script = repo(&t, INSTALL_AGENTS, "#!/usr/bin/env bash\nv=4.100.3\n");
    fake_npm(&t, &[("code-server", "4.139.1")], "1.${v#4.}", false);
    let out = run(&t, &script, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("scripts/install-code-server.sh has no `version=` line"), "{stdout}");
    assert_eq!(rows(&stdout)["code-server"], ("?".into(), "4.139.1".into(), String::new(), false), "{stdout}");

    // And an agent whose pin is gone from install-agents.sh.
    let script = repo(&t, "pins=(\n  @openai/codex@0.171.0\n)\n", "version=4.100.3\n");
    let out = run(&t, &script, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("Claude Code (@anthropic-ai/claude-code): no pin found in scripts/install-agents.sh"),
        "{stdout}"
    );
}
