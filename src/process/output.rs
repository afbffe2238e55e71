//! Where results go: the chosen format to stdout (or stderr), the JSON file
//! and every other file stampede writes, `-` meaning stdout as in Unix
//! tools; and the check, before any load is sent, that each can be written.

use anyhow::Context;
use stampede_metrics::RunResult;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `-o/--output` writes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

/// True for the path `-`: the file's content goes to stdout.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Prints the result to stdout in `format`.
pub fn print(result: &RunResult, format: OutputFormat) -> anyhow::Result<()> {
    print_summary(result, format, false)
}

/// Where a command's human-readable text goes: stdout, or stderr when a
/// file flag took stdout (`--json -`), so the two never mix in one stream.
pub fn text_out(on_stderr: bool) -> Box<dyn Write> {
    if on_stderr {
        Box::new(std::io::stderr().lock())
    } else {
        Box::new(std::io::stdout().lock())
    }
}

/// Writes text made by `render` on stdout, or on stderr when JSON takes
/// stdout (`--json -`), and flushes it.
pub fn print_text(
    on_stderr: bool,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut out = text_out(on_stderr);
    render(&mut out)?;
    out.flush()?;
    Ok(())
}

/// Prints the result in `format`, on stderr when an export took stdout
/// (`--json -`), so the two never mix in one stream.
pub fn print_summary(
    result: &RunResult,
    format: OutputFormat,
    on_stderr: bool,
) -> anyhow::Result<()> {
    let render = |out: &mut dyn Write| match format {
        OutputFormat::Text => stampede_report::render_text(result, out),
        OutputFormat::Json => stampede_report::render_json(result, out),
    };
    if on_stderr {
        let mut err = std::io::stderr().lock();
        render(&mut err)
            .and_then(|()| err.flush())
            .context("writing to stderr")
    } else {
        let mut out = std::io::stdout().lock();
        render(&mut out)
            .and_then(|()| out.flush())
            .context("writing to stdout")
    }
}

/// Writes the JSON result file atomically (temp file, then rename), so an
/// interrupted write never leaves half a result behind.
pub fn write_json(result: &RunResult, path: &Path) -> anyhow::Result<()> {
    write_atomically(path, |out| stampede_report::render_json(result, out))
}

/// Writes any JSON document (sweeps, repeats) the same way.
pub fn write_json_value(document: &serde_json::Value, path: &Path) -> anyhow::Result<()> {
    write_atomically(path, |out| {
        serde_json::to_writer_pretty(&mut *out, document)?;
        writeln!(out)
    })
}

/// Writes a file through a buffer, with the path in any error: every file
/// stampede writes goes here. A regular file is written atomically (a temp
/// file beside it, then a rename); `-` is stdout; an existing non-regular
/// file (`/dev/stdout`, a FIFO, `>(jq .)`) is written in place, never
/// replaced.
pub fn write_atomically(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    if is_stdout(path) {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        return render(&mut out)
            .and_then(|()| out.flush())
            .context("writing to stdout");
    }
    // A symlink is written through, as a shell's `>` would: the new file
    // replaces the one the link points at, and the link stays.
    let path = &through_links(path);
    if is_special(path) {
        let write = || -> std::io::Result<()> {
            let file = std::fs::OpenOptions::new().write(true).open(path)?;
            let mut out = std::io::BufWriter::new(file);
            render(&mut out)?;
            out.flush()
        };
        return write().with_context(|| format!("writing {}", path.display()));
    }
    // The pid keeps two writers of one path (a forced exit's salvage and
    // the main thread) off each other's temp file.
    let mut temp_name = path.as_os_str().to_owned();
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(temp_name);
    let write = || -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&temp)?);
        render(&mut file)?;
        file.into_inner()?.sync_all()?;
        std::fs::rename(&temp, path)
    };
    let written = write();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.with_context(|| format!("writing {}", path.display()))
}

/// The file a write of `path` replaces: `path` itself, or where it leads
/// when it is a symlink.
fn through_links(path: &Path) -> PathBuf {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        link_target(path)
    } else {
        path.to_path_buf()
    }
}

/// Where a symlink leads, followed to the end; a dangling one names the
/// file it would point at (relative targets are relative to the link's folder).
fn link_target(link: &Path) -> PathBuf {
    if let Ok(target) = std::fs::canonicalize(link) {
        return target;
    }
    match std::fs::read_link(link) {
        Ok(target) => link.parent().unwrap_or(Path::new(".")).join(target),
        Err(_) => link.to_path_buf(),
    }
}

/// An existing path that is not a regular file or a directory: written in place.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Checks, before the first request, that every output (`flag`, `path`)
/// can be written, so a bad path costs no load: the directory must exist
/// and take a new file (probed with a file created and removed at once,
/// which is what the atomic write will need), the path must not be a
/// directory, two flags must not write one file, and at most one may be `-`.
/// Nothing is left behind: the files themselves are written at the end.
pub fn preflight(outputs: &[(&str, &Path)]) -> anyhow::Result<()> {
    let mut to_stdout: Vec<&str> = Vec::new();
    for (index, (flag, path)) in outputs.iter().enumerate() {
        if is_stdout(path) {
            to_stdout.push(flag);
            continue;
        }
        // /dev/null may take several outputs; a file may take one.
        let same = |(_, p): &&(&str, &Path)| {
            !is_stdout(p) && !is_special(path) && resolved(p) == resolved(path)
        };
        if let Some((other, _)) = outputs[..index].iter().find(same) {
            anyhow::bail!("{other} and {flag} both write {}", path.display());
        }
        probe(path).with_context(|| format!("{flag} {}", path.display()))?;
    }
    if to_stdout.len() > 1 {
        anyhow::bail!(
            "only one output can go to stdout ('-'), not {}",
            to_stdout.join(" and ")
        );
    }
    Ok(())
}

/// [`preflight`] of the flags that were given.
pub fn preflight_given(outputs: &[(&str, Option<&PathBuf>)]) -> anyhow::Result<()> {
    let given: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|(flag, path)| path.map(|path| (*flag, path.as_path())))
        .collect();
    preflight(&given)
}

/// Where `path` will be written, whatever its spelling (`./x`, `/abs/x`,
/// a link): its directory resolved, then its name.
pub fn resolved(path: &Path) -> PathBuf {
    let path = through_links(path);
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path,
    }
}

/// True when any of the outputs is `-`.
pub fn any_to_stdout(outputs: &[(&str, &Path)]) -> bool {
    outputs.iter().any(|(_, path)| is_stdout(path))
}

/// Can a file be created at `path` the way [`write_atomically`] will?
fn probe(path: &Path) -> anyhow::Result<()> {
    let path = &through_links(path);
    let metadata = std::fs::metadata(path);
    if metadata.as_ref().is_ok_and(|m| m.is_dir()) {
        anyhow::bail!("is a directory");
    }
    if is_special(path) {
        return Ok(());
    }
    let Some(name) = path.file_name() else {
        anyhow::bail!("is not a file name");
    };
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut probe_name = std::ffi::OsString::from(".");
    probe_name.push(name);
    probe_name.push(format!(".{}.check", std::process::id()));
    let probe = dir.join(probe_name);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| anyhow::anyhow!("cannot create a file in {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("stampede-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn preflight_names_the_flag_and_path_and_leaves_nothing() {
        let error = preflight(&[("--json", Path::new("/nonexistent/dir/x.json"))])
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("--json /nonexistent/dir/x.json"),
            "{error}"
        );
        let dir = dir();
        let good = dir.join("good.json");
        preflight(&[("--json", good.as_path())]).unwrap();
        assert!(!good.exists(), "the check creates no file");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no probe left");
        let error = format!("{:#}", preflight(&[("--html", dir.as_path())]).unwrap_err());
        assert!(error.contains("is a directory"), "{error}");
    }

    #[test]
    fn a_symlink_is_written_through_and_stays_a_link() {
        let dir = std::env::temp_dir().join(format!("stampede-output-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let real = dir.join("real.json");
        let link = dir.join("link.json");
        std::fs::write(&real, "{}").unwrap();
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_atomically(&link, |out| out.write_all(b"new")).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        // A dangling link creates the file it points at.
        std::fs::remove_file(&real).unwrap();
        write_atomically(&link, |out| out.write_all(b"again")).unwrap();
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "again");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn preflight_refuses_two_stdouts_and_one_file_twice() {
        let dash = Path::new("-");
        assert!(preflight(&[("--json", dash)]).is_ok());
        let error = preflight(&[("--json", dash), ("--csv", dash)]).unwrap_err();
        assert!(error.to_string().contains("--json and --csv"), "{error}");
        let same = Path::new("same.out");
        let error = preflight(&[("--json", same), ("--html", same)]).unwrap_err();
        assert!(error.to_string().contains("both write"), "{error}");
        // The same file however it is spelled.
        let absolute = std::env::current_dir().unwrap().join("same.out");
        for other in [Path::new("./same.out"), absolute.as_path()] {
            let error = preflight(&[("--hlog", same), ("--json", other)]).unwrap_err();
            assert!(
                error.to_string().contains("both write"),
                "{other:?}: {error}"
            );
        }
        let null = Path::new("/dev/null");
        assert!(preflight(&[("--json", null), ("--html", null)]).is_ok());
    }

    #[test]
    fn special_files_are_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        write_atomically(Path::new("/dev/null"), |out| out.write_all(b"x")).unwrap();
        let kind = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null is not replaced by a file");
    }
}
