"""Writing a report's folder (defs/services.write_report): writers take turns under a lock on the folder, and
each file appears whole. Real processes on a real folder."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from fairness_assets.defs.services import folder_lock, write_report

ROOT = Path(__file__).resolve().parents[2]
WRITER = """
import sys
from pathlib import Path
from fairness_assets.defs.services import write_report

class Files:  # what audit_report.ReportFiles gives write_report: every file of the report by relative path
    def __init__(self, files):
        self._files = files
    def files(self):
        return self._files

layout = sys.argv[2]
files = {"report.html": f"<html>{layout}</html>", "report.md": layout}
if layout == "pages":
    files.update({"models/a.html": "a", "models/b.html": "b", "figures/x.png": b"\\x89PNG" + bytes(100_000)})
print("writing", flush=True)
write_report(Path(sys.argv[1]), Files(files))
print("written", flush=True)
"""


def _writer(folder: Path, layout: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), layout], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_a_second_writer_waits_for_the_first_and_leaves_its_own_layout_whole(tmp_path):
    folder = tmp_path / "report-x"
    done = _writer(folder, "pages")
    assert done.wait(timeout=120) == 0
    assert {"models/a.html", "models/b.html", "figures/x.png", "report.html"} <= _files(folder)
    with folder_lock(folder):  # another run is writing this report
        second = _writer(folder, "single")
        assert second.stdout.readline().strip() == "writing"
        time.sleep(1.0)
        assert second.poll() is None, "the second writer wrote while the folder was locked"
        assert (folder / "models" / "a.html").exists()  # nothing removed under the first writer's feet
    assert second.wait(timeout=120) == 0
    assert (folder / "report.html").read_text() == "<html>single</html>"
    assert not any(p.startswith("models/") for p in _files(folder))  # the single layout's report has no pages
    assert not [p for p in _files(folder) if ".partial-" in p]  # every file renamed into place


def test_writers_at_once_leave_one_layout_whole_each_time(tmp_path):
    """Rounds of a pages writer and a single-file writer started together: after each round the folder is one
    writer's report, whole (an index whose pages are all there, or one file with no stale pages)."""
    folder = tmp_path / "report-y"
    for _ in range(2):
        procs = [_writer(folder, "pages"), _writer(folder, "single")]
        assert [p.wait(timeout=120) for p in procs] == [0, 0]
        index = (folder / "report.html").read_text()
        pages = {p for p in _files(folder) if p.startswith("models/")}
        if index == "<html>pages</html>":
            assert pages == {"models/a.html", "models/b.html"}
        else:
            assert index == "<html>single</html>" and pages == set(), pages
        assert (folder / "report.md").read_text() in index  # the two files of the index from the same writer
        assert not [p for p in _files(folder) if ".partial-" in p]


def test_write_report_in_process_still_writes_every_file(tmp_path):
    class Files:
        def files(self):
            return {"report.html": "<html/>", "models/m.html": "m", "figures/f.png": b"png"}

    folder = write_report(tmp_path / "r", Files())
    assert _files(folder) == {"report.html", "models/m.html", "figures/f.png"}
    assert (folder / "figures" / "f.png").read_bytes() == b"png"


def test_the_partial_files_of_a_killed_writer_are_removed_by_the_next(tmp_path):
    class Files:
        def files(self):
            return {"report.html": "<html/>", "models/m.html": "m"}

    folder = tmp_path / "r"
    (folder / "models").mkdir(parents=True)
    (folder / ".report.html.partial-999999").write_text("<ht")  # a writer killed while writing
    (folder / "models" / ".m.html.partial-999999").write_text("")
    write_report(folder, Files())
    assert _files(folder) == {"report.html", "models/m.html"}
