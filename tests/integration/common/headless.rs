//! A real browser for the tests of dlqspec's HTML pages: headless Chromium renders a page, and
//! the test reads back the DOM after the page's scripts ran, what the page wrote to the console,
//! and every network request it made; a screenshot on request.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Tier, tier_lacking};

/// The names a Chromium is installed under, looked up on `PATH` in this order.
const BROWSERS: &[&str] = &["chromium", "chromium-browser", "google-chrome"];

/// `DLQSPEC_BROWSER=PATH` names the browser instead of `PATH`'s first Chromium.
pub(crate) const BROWSER_VARIABLE: &str = "DLQSPEC_BROWSER";

/// `DLQSPEC_BLESS_SCREENSHOTS=1` makes the browser tests write their screenshots into
/// `docs/images/`, the pictures the docs show.
pub(crate) const BLESS_VARIABLE: &str = "DLQSPEC_BLESS_SCREENSHOTS";

/// The window every page is drawn in: a fixed size, so the committed screenshots stay small and
/// the same from one blessing to the next.
pub(crate) const WINDOW: (u32, u32) = (1000, 1000);

/// A hang-guard only: a page renders in about a second, on a busy machine in several.
const HANG_GUARD: Duration = Duration::from_secs(180);

/// Bounds on what is read back from the browser's files.
const MAX_DOM: u64 = 16 << 20;
const MAX_LOG: u64 = 16 << 20;
const MAX_NET_LOG: u64 = 64 << 20;

/// The browser the tests use, or `None` when there is none: then the browser tier is skipped
/// (`common::Tier`), which fails a run that must run it.
pub(crate) fn browser() -> Option<PathBuf> {
    let found = browser_or_skip(browser_path(), Tier::Browser.required());
    if found.is_none() {
        tier_lacking(
            Tier::Browser,
            Some("no chromium, chromium-browser or google-chrome on PATH".to_owned()),
        );
    }
    found
}

/// The browser `DLQSPEC_BROWSER` names, else the first Chromium on `PATH`.
pub(crate) fn browser_path() -> Option<PathBuf> {
    std::env::var_os(BROWSER_VARIABLE)
        .map(PathBuf::from)
        .or_else(|| find_on_path(&std::env::var_os("PATH").unwrap_or_default()))
}

/// The first of `BROWSERS` that is an executable file in one of `path`'s folders.
pub(crate) fn find_on_path(path: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).find_map(|dir| {
        BROWSERS.iter().map(|name| dir.join(name)).find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// A missing browser fails a run that must check the pages (CI), saying how to install one;
/// elsewhere it is a skip, told at the end of the run.
pub(crate) fn browser_or_skip(found: Option<PathBuf>, required: bool) -> Option<PathBuf> {
    if found.is_none() {
        assert!(
            !required,
            "chromium is missing, and CI must test the HTML pages in a browser: install it \
             (`apt-get install -y chromium` on Debian, as .ci/run does), or name one with \
             {BROWSER_VARIABLE}=PATH"
        );
    }
    found
}

/// Where a blessing run puts the screenshot called `name` (`docs/images/NAME.png`); `None`
/// when screenshots are not being blessed.
pub(crate) fn blessed_screenshot(name: &str) -> Option<PathBuf> {
    std::env::var(BLESS_VARIABLE)
        .is_ok_and(|v| v == "1")
        .then(|| {
            super::root()
                .join("docs/images")
                .join(format!("{name}.png"))
        })
}

/// What the browser made of a page.
pub(crate) struct Rendered {
    /// The document after its scripts ran, as the browser serialises it.
    pub dom: Dom,
    /// Every line the page wrote to the console (a script error is one: `Uncaught ...`).
    pub console: Vec<String>,
    /// The URL of every network request the page made.
    pub requests: Vec<String>,
    /// The screenshot, when one was asked for.
    pub screenshot: Option<Vec<u8>>,
}

impl Rendered {
    /// Asserts the page said nothing on the console and reached for no network resource, by
    /// its DOM or by the requests the browser made.
    pub(crate) fn assert_clean(&self, what: &str) {
        assert!(
            self.console.is_empty(),
            "{what}: the page wrote to the console:\n{}",
            self.console.join("\n")
        );
        let remote = self.dom.remote_resources();
        assert!(
            remote.is_empty(),
            "{what}: the page names network resources: {remote:?}"
        );
        assert!(
            self.requests.is_empty(),
            "{what}: the page made network requests: {:?}",
            self.requests
        );
    }
}

/// Renders `page` (a file) in `browser`, headless, in a window of `WINDOW`'s size; with
/// `screenshot`, takes a picture of the window too.
pub(crate) fn render(browser: &Path, page: &Path, screenshot: bool) -> Rendered {
    render_in(browser, page, screenshot, WINDOW)
}

/// `render`, in a window of `window`'s size (width and height in CSS pixels).
pub(crate) fn render_in(
    browser: &Path,
    page: &Path,
    screenshot: bool,
    window: (u32, u32),
) -> Rendered {
    let work = tempfile::tempdir().expect("temp dir");
    let home = work.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let dom_file = work.path().join("dom.html");
    let log_file = work.path().join("stderr.log");
    let net_log = work.path().join("net-log.json");
    let picture = work.path().join("screenshot.png");
    let page = std::fs::canonicalize(page).expect("the page exists");
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-extensions",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            // Console messages and uncaught errors, as `INFO:CONSOLE` lines on stderr.
            "--enable-logging=stderr",
            "--v=0",
            // No name resolves: nothing a page (or the browser's own services) asks for can
            // leave the machine; the net log below still records each request.
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.path().join("profile").display()
        ))
        .arg(format!("--log-net-log={}", net_log.display()))
        .arg(format!("--window-size={},{}", window.0, window.1))
        .args(screenshot.then(|| format!("--screenshot={}", picture.display())))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        // Its crash reporter keeps its database under the home folder: this one, not the user's.
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&dom_file).expect("dom file"))
        .stderr(std::fs::File::create(&log_file).expect("log file"))
        // A group of its own, so every process it starts can be ended with it.
        .process_group(0);
    let child = command.spawn().expect("the browser starts");
    let finished = wait_then_end(child, work.path());
    let log = read_bounded(&log_file, MAX_LOG);
    assert!(
        finished,
        "the browser did not finish rendering {} within {} s:\n{log}",
        page.display(),
        HANG_GUARD.as_secs()
    );
    let dom = read_bounded(&dom_file, MAX_DOM);
    assert!(
        dom.contains("<html"),
        "the browser gave no DOM for {}:\n{log}",
        page.display()
    );
    Rendered {
        dom: Dom::parse(&dom),
        console: console_lines(&log),
        requests: page_requests(&read_bounded(&net_log, MAX_NET_LOG)),
        screenshot: screenshot.then(|| std::fs::read(&picture).expect("the screenshot")),
    }
}

/// Waits for the browser within the hang-guard, then kills whatever it left: its process group,
/// and the processes that left the group (its crash reporter starts a session of its own) but
/// name `work`, the folder only this rendering uses. Whether it finished in time.
fn wait_then_end(mut child: Child, work: &Path) -> bool {
    let group = i32::try_from(child.id()).expect("a pid");
    let until = Instant::now() + HANG_GUARD;
    // Not reaped before its group is killed: while it is a zombie, its pid (the group's id)
    // cannot be given to another process.
    let finished = loop {
        if exited(group) {
            break true;
        }
        if Instant::now() >= until {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: kill(2) has no memory-safety preconditions; the group is the browser's own.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
    let _ = child.wait();
    let marker = format!("{}/", work.display()).into_bytes();
    let left: Vec<String> = processes()
        .filter(|(_, group_of, cmdline)| {
            *group_of == group || cmdline.windows(marker.len()).any(|w| w == marker)
        })
        .map(|(pid, ..)| pid)
        .collect();
    for pid in &left {
        // SAFETY: as above; each is a process of this rendering.
        unsafe {
            libc::kill(pid.parse().unwrap_or(0), libc::SIGKILL);
        }
    }
    super::assert_all_dead(&left, "the browser's processes");
    finished
}

/// Whether the child `pid` has exited, leaving it unreaped.
fn exited(pid: i32) -> bool {
    // SAFETY: waitid(2) writes only into `info`, a zeroed siginfo_t it may fill.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        let id = libc::id_t::try_from(pid).expect("a pid");
        libc::waitid(libc::P_PID, id, &mut info, flags) == 0 && info.si_pid() != 0
    }
}

/// Every live process: its pid, its process group and its command line.
fn processes() -> impl Iterator<Item = (String, i32, Vec<u8>)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().into_string().ok()?;
            if !pid.bytes().all(|b| b.is_ascii_digit()) || super::dead(&pid) {
                return None;
            }
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // After the parenthesised name: state, parent, process group.
            let group = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(2)?
                .parse()
                .ok()?;
            let mut cmdline = Vec::new();
            std::fs::File::open(entry.path().join("cmdline"))
                .ok()?
                .take(1 << 16)
                .read_to_end(&mut cmdline)
                .ok()?;
            Some((pid, group, cmdline))
        })
}

/// At most `limit` bytes of `file` as text; empty when it is missing.
fn read_bounded(file: &Path, limit: u64) -> String {
    let mut bytes = Vec::new();
    if let Ok(opened) = std::fs::File::open(file) {
        opened
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .expect("read the browser's output");
    }
    assert!(
        bytes.len() as u64 <= limit,
        "{} is over {limit} bytes",
        file.display()
    );
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The console lines of Chromium's log: `[...:INFO:CONSOLE:12] "message", source: URL (12)`
/// (older versions write `CONSOLE(12)`); but those of the browser's own pages (`chrome://`,
/// `devtools://`, an extension's), which are not the page's doing.
pub(crate) fn console_lines(log: &str) -> Vec<String> {
    const BROWSERS_OWN: &[&str] = &[
        "chrome://",
        "chrome-untrusted://",
        "devtools://",
        "chrome-extension://",
    ];
    log.lines()
        .filter(|line| line.contains(":CONSOLE"))
        .filter(|line| {
            let source = line.rsplit_once(", source: ").map_or("", |(_, s)| s);
            !BROWSERS_OWN.iter().any(|own| source.starts_with(own))
        })
        .map(str::to_owned)
        .collect()
}

/// The URLs the page asked the network for, from Chromium's net log: requests made for a
/// `file://` page carry its origin in their network isolation key; the browser's own (update
/// checks and the like) do not.
pub(crate) fn page_requests(net_log: &str) -> Vec<String> {
    let log: serde_json::Value = serde_json::from_str(net_log)
        .unwrap_or_else(|e| panic!("the browser's net log is not JSON ({e}): {:.300}", net_log));
    let mut urls: Vec<String> = log["events"]
        .as_array()
        .expect("the net log's events")
        .iter()
        .filter_map(|event| {
            let params = &event["params"];
            let url = params["url"].as_str()?;
            let from_page = ["network_isolation_key", "site_for_cookies"]
                .iter()
                .any(|key| params[key].as_str().is_some_and(|v| v.contains("file://")));
            (from_page && !url.starts_with("file:") && !url.starts_with("data:"))
                .then(|| url.to_owned())
        })
        .collect();
    urls.sort();
    urls.dedup();
    urls
}

/// A copy of `page` beside it, called `name`, that runs `script` once the page's own scripts
/// have: a test's clicks, in the real browser.
pub(crate) fn with_script(page: &Path, name: &str, script: &str) -> PathBuf {
    let html = std::fs::read_to_string(page).expect("the page");
    let at = html.rfind("</body>").expect("the page has a body");
    let copy = page.with_file_name(name);
    let text = format!("{}<script>{script}</script>\n{}", &html[..at], &html[at..]);
    std::fs::write(&copy, text).expect("write the copy");
    copy
}

/// One element of a document: its tag, attributes, parent and text (its descendants' too).
#[derive(Debug)]
pub(crate) struct Element {
    pub tag: String,
    pub attributes: Vec<(String, String)>,
    pub parent: Option<usize>,
    pub text: String,
}

impl Element {
    pub(crate) fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn has_class(&self, class: &str) -> bool {
        self.attribute("class")
            .is_some_and(|classes| classes.split_whitespace().any(|c| c == class))
    }

    /// The text with runs of white space made one space, trimmed.
    pub(crate) fn words(&self) -> String {
        self.text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A document as the browser serialises it, read into its elements (in document order) by a
/// small scan: the serialisation is regular (attributes quoted, text escaped, raw text only in
/// `script` and `style`), so this needs no full HTML parser.
#[derive(Debug)]
pub(crate) struct Dom {
    pub elements: Vec<Element>,
}

const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title"];

impl Dom {
    pub(crate) fn parse(html: &str) -> Dom {
        let mut elements: Vec<Element> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        let mut rest = html;
        let add_text = |elements: &mut Vec<Element>, open: &[usize], text: &str| {
            for &index in open {
                elements[index].text.push_str(text);
            }
        };
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("<!--") {
                rest = after.split_once("-->").map_or("", |(_, r)| r);
            } else if rest.starts_with("<!") || rest.starts_with("<?") {
                rest = rest.split_once('>').map_or("", |(_, r)| r);
            } else if let Some(after) = rest.strip_prefix("</") {
                let (name, after) = after.split_once('>').unwrap_or((after, ""));
                let name = name.trim().to_ascii_lowercase();
                if let Some(at) = open.iter().rposition(|&i| elements[i].tag == name) {
                    open.truncate(at);
                }
                rest = after;
            } else if rest.starts_with('<')
                && rest[1..].starts_with(|c: char| c.is_ascii_alphabetic())
            {
                let (tag, attributes, self_closing, after) = scan_tag(&rest[1..]);
                elements.push(Element {
                    tag: tag.clone(),
                    attributes,
                    parent: open.last().copied(),
                    text: String::new(),
                });
                let index = elements.len() - 1;
                rest = after;
                if RAW_TEXT.contains(&tag.as_str()) {
                    let end = format!("</{tag}");
                    let at = rest.to_ascii_lowercase().find(&end).unwrap_or(rest.len());
                    let raw = if tag == "textarea" || tag == "title" {
                        decode(&rest[..at])
                    } else {
                        rest[..at].to_owned()
                    };
                    open.push(index);
                    add_text(&mut elements, &open, &raw);
                    open.pop();
                    rest = &rest[at..];
                    rest = rest.split_once('>').map_or("", |(_, r)| r);
                } else if !self_closing && !VOID.contains(&tag.as_str()) {
                    open.push(index);
                }
            } else {
                let first = rest.chars().next().map_or(1, char::len_utf8);
                let at = rest[first..].find('<').map_or(rest.len(), |i| i + first);
                add_text(&mut elements, &open, &decode(&rest[..at]));
                rest = &rest[at..];
            }
        }
        Dom { elements }
    }

    /// The indexes of the elements `keep` holds for, in document order.
    pub(crate) fn find(&self, keep: impl Fn(&Element) -> bool) -> Vec<usize> {
        (0..self.elements.len())
            .filter(|&i| keep(&self.elements[i]))
            .collect()
    }

    /// The element whose `id` is `id`; a test failure when there is none, or more than one.
    pub(crate) fn by_id(&self, id: &str) -> usize {
        let found = self.find(|e| e.attribute("id") == Some(id));
        assert_eq!(found.len(), 1, "elements with id {id:?}: {}", found.len());
        found[0]
    }

    /// Whether `index` is `ancestor` or inside it.
    pub(crate) fn is_within(&self, index: usize, ancestor: usize) -> bool {
        let mut at = Some(index);
        while let Some(i) = at {
            if i == ancestor {
                return true;
            }
            at = self.elements[i].parent;
        }
        false
    }

    /// The elements inside `ancestor` with tag `tag`, in document order.
    pub(crate) fn within(&self, ancestor: usize, tag: &str) -> Vec<usize> {
        self.find(|e| e.tag == tag)
            .into_iter()
            .filter(|&i| i != ancestor && self.is_within(i, ancestor))
            .collect()
    }

    pub(crate) fn get(&self, index: usize) -> &Element {
        &self.elements[index]
    }

    /// Every resource the document names outside the machine: a `src`, `href` or the like
    /// with a scheme other than `file:` or `data:` (or starting `//`), and a `url(...)` or
    /// `@import` of one in a style.
    pub(crate) fn remote_resources(&self) -> Vec<String> {
        const LINKING: &[&str] = &[
            "src",
            "href",
            "xlink:href",
            "srcset",
            "action",
            "formaction",
            "data",
            "poster",
            "background",
            "manifest",
        ];
        let remote = |value: &str| {
            let value = value.trim().to_ascii_lowercase();
            value.starts_with("//")
                || value.split_once(':').is_some_and(|(scheme, _)| {
                    !scheme.is_empty()
                        && scheme
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                        && !matches!(scheme, "file" | "data" | "javascript")
                })
        };
        let styled = |css: &str| {
            let css = css.to_ascii_lowercase();
            css.contains("@import")
                || css
                    .split("url(")
                    .skip(1)
                    .any(|after| remote(after.trim_start().trim_start_matches(['"', '\''])))
        };
        let mut found = Vec::new();
        for element in &self.elements {
            for (name, value) in &element.attributes {
                if (LINKING.contains(&name.as_str()) && remote(value))
                    || (name == "style" && styled(value))
                {
                    found.push(format!("<{} {name}=\"{value}\">", element.tag));
                }
            }
            if element.tag == "style" && styled(&element.text) {
                found.push(format!("<style>{}</style>", element.text));
            }
        }
        found
    }
}

/// Reads a start tag after its `<`: the name, the attributes (names lowercased, values
/// decoded), whether it ends `/>`, and the text after its `>`.
fn scan_tag(text: &str) -> (String, Vec<(String, String)>, bool, &str) {
    let name_end = text
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .unwrap_or(text.len());
    let tag = text[..name_end].to_ascii_lowercase();
    let mut rest = &text[name_end..];
    let mut attributes = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("/>") {
            return (tag, attributes, true, after);
        }
        if let Some(after) = rest.strip_prefix('>') {
            return (tag, attributes, false, after);
        }
        if rest.is_empty() {
            return (tag, attributes, false, rest);
        }
        if let Some(after) = rest.strip_prefix('/') {
            rest = after;
            continue;
        }
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '>' || c == '/')
            .unwrap_or(rest.len())
            .max(1);
        let name = rest[..name_end].to_ascii_lowercase();
        rest = rest[name_end..].trim_start();
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            let (value, after) = match after.chars().next() {
                Some(quote @ ('"' | '\'')) => {
                    let body = &after[1..];
                    let end = body.find(quote).unwrap_or(body.len());
                    (&body[..end], body.get(end + 1..).unwrap_or(""))
                }
                _ => {
                    let end = after
                        .find(|c: char| c.is_whitespace() || c == '>')
                        .unwrap_or(after.len());
                    (&after[..end], &after[end..])
                }
            };
            rest = after;
            decode(value)
        } else {
            String::new()
        };
        attributes.push((name, value));
    }
}

/// Text with the character references a serialiser writes decoded.
fn decode(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let reference = rest[1..]
            .find(';')
            .filter(|&end| end <= 10)
            .map(|end| &rest[1..=end]);
        let decoded = reference.and_then(|name| match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some('\u{a0}'),
            _ => name
                .strip_prefix("#x")
                .or_else(|| name.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|n| n.parse().ok()))
                .and_then(char::from_u32),
        });
        match (reference, decoded) {
            (Some(name), Some(c)) => {
                out.push(c);
                rest = &rest[name.len() + 2..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}
