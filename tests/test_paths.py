"""`baton.paths.Roots`: path arguments confined to server-side directories, on a real temporary tree.

Rules: digest §9 (Roots deprecated: pass paths as tool parameters, checked by the server) and the module
docstring of `baton.paths`. The tree (built per test):

    tmp/root/           a.txt, café/naïve.txt, 日本語.md, sub/b.txt, sub/deeper/c.txt
                        links inside:  sub/up -> ../a.txt, insub -> sub, abs_in -> <root>/sub/b.txt
                        links outside: out_file -> ../outside/secret.txt, out_dir -> ../outside,
                                       abs_out -> <tmp>/outside, dev -> /dev/null, etc -> /etc,
                                       sneaky -> sub/../../outside (climbs out through an inside link)
                        loop_a <-> loop_b, dangling -> nowhere
    tmp/outside/        secret.txt
    tmp/root2/          other.txt (a second root)
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from support.serve import RunningServer
from wire import call

import baton.paths
from baton.paths import MAX_NAME_BYTES, MAX_PATH_BYTES, PathRefused, Roots


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "café").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "root2").mkdir()
    (root / "a.txt").write_text("A")
    (root / "café" / "naïve.txt").write_text("N")
    (root / "日本語.md").write_text("J")
    (root / "sub" / "b.txt").write_text("B")
    (root / "sub" / "deeper" / "c.txt").write_text("C")
    (tmp_path / "outside" / "secret.txt").write_text("SECRET")
    (tmp_path / "root2" / "other.txt").write_text("O")
    (root / "sub" / "up").symlink_to("../a.txt")
    (root / "insub").symlink_to("sub")
    (root / "abs_in").symlink_to(root / "sub" / "b.txt")
    (root / "out_file").symlink_to("../outside/secret.txt")
    (root / "out_dir").symlink_to("../outside")
    (root / "abs_out").symlink_to(tmp_path / "outside")
    (root / "dev").symlink_to("/dev/null")
    (root / "etc").symlink_to("/etc")
    (root / "sneaky").symlink_to("sub/../../outside")
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "dangling").symlink_to("nowhere")
    return tmp_path


@pytest.fixture
def roots(tree: Path) -> Roots:
    return Roots(tree / "root", tree / "root2")


def refused(roots: Roots, path: str, *words: str, **options: object) -> str:
    with pytest.raises(PathRefused) as info:
        roots.resolve(path, **options)  # type: ignore[arg-type]
    message = str(info.value)
    for word in words:
        assert word in message, message
    return message


# -- accepted paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.txt", "a.txt"),
        ("./a.txt", "a.txt"),
        ("sub//b.txt", "sub/b.txt"),
        ("sub/deeper/c.txt", "sub/deeper/c.txt"),
        ("sub/deeper/../b.txt", "sub/b.txt"),  # `..` that stays inside is fine
        ("sub/up", "a.txt"),  # a relative link inside the root
        ("insub/b.txt", "sub/b.txt"),  # a directory link inside the root
        ("insub/../a.txt", "a.txt"),  # `..` after a link: the kernel's reading (the link's target's parent)
        ("abs_in", "sub/b.txt"),  # an absolute link inside the root
        ("café/naïve.txt", "café/naïve.txt"),
        ("日本語.md", "日本語.md"),
        ("sub", "sub"),
        ("sub/", "sub"),
    ],
)
def test_paths_inside_resolve_to_their_real_location(roots: Roots, tree: Path, path: str, expected: str) -> None:
    resolved = roots.resolve(path)
    assert resolved == tree / "root" / expected
    assert resolved.is_absolute()
    assert roots.display(resolved) == expected


def test_the_root_itself(roots: Roots, tree: Path) -> None:
    root = tree / "root"
    for path in (".", "./", str(root), f"{root}/", f"{root}/.", "sub/.."):
        assert roots.resolve(path) == root, path
        assert roots.display(roots.resolve(path)) == "."
    assert roots.resolve(".", kind="dir") == root
    refused(roots, ".", "is not a file", kind="file")
    refused(roots, "..", "outside the allowed directories")
    refused(roots, str(tree), "outside the allowed directories")  # the root's parent
    refused(roots, "/", "outside the allowed directories")


def test_absolute_paths_inside_any_root(roots: Roots, tree: Path) -> None:
    assert roots.resolve(str(tree / "root" / "sub" / "b.txt")) == tree / "root" / "sub" / "b.txt"
    assert roots.resolve(str(tree / "root2" / "other.txt")) == tree / "root2" / "other.txt"
    # relative paths use the first root only
    refused(roots, "other.txt", "does not exist")
    refused(roots, "../root2/other.txt", "outside the allowed directories")


def test_a_root_given_through_a_symbolic_link(tree: Path) -> None:
    (tree / "alias").symlink_to(tree / "root")
    roots = Roots(tree / "alias")
    assert roots.directories == (tree / "root",)
    assert roots.resolve("a.txt") == tree / "root" / "a.txt"
    assert roots.resolve(str(tree / "alias" / "a.txt")) == tree / "root" / "a.txt"
    assert roots.resolve(str(tree / "root" / "a.txt")) == tree / "root" / "a.txt"


def test_unicode_names_are_not_normalized(roots: Roots) -> None:
    decomposed = "cafe\u0301/nai\u0308ve.txt"  # NFD spelling of café/naïve.txt (stored NFC)
    refused(roots, decomposed, "does not exist")
    refused(roots, "caf\udce9/x", "not valid Unicode")  # a lone surrogate (possible in JSON)


def test_paths_that_do_not_exist_yet(roots: Roots, tree: Path) -> None:
    refused(roots, "new.txt", "does not exist")
    assert roots.resolve("new.txt", must_exist=False) == tree / "root" / "new.txt"
    assert roots.resolve("sub/new/deeper.txt", must_exist=False) == tree / "root" / "sub" / "new" / "deeper.txt"
    assert roots.resolve("insub/new.txt", must_exist=False) == tree / "root" / "sub" / "new.txt"
    # a missing name does not make what follows it unchecked
    refused(roots, "nope/../out_dir/secret.txt", "symbolic link", must_exist=False)
    refused(roots, "nope/../../outside", "outside", must_exist=False)
    refused(roots, "out_dir/new.txt", "symbolic link", must_exist=False)


# -- refused paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "../../etc/passwd",
        "sub/../../outside/secret.txt",
        "sub/deeper/../../../outside",
        "../root/a.txt",  # climbs out and back in: still refused
        "/etc/passwd",
        "/dev/null",
        "/",
        "//etc/passwd",
    ],
)
def test_escapes_are_refused(roots: Roots, path: str) -> None:
    refused(roots, path, "outside the allowed directories")


def test_dotdot_after_the_root_prefix_of_an_absolute_path(roots: Roots, tree: Path) -> None:
    refused(roots, f"{tree}/root/../outside/secret.txt", "outside the allowed directories")
    refused(roots, f"{tree}/root/sub/../../root/a.txt", "outside the allowed directories")


@pytest.mark.parametrize(
    "path",
    [
        "out_file",  # a link to a file outside
        "out_dir",  # a directory link escaping
        "out_dir/secret.txt",
        "abs_out/secret.txt",  # an absolute link outside
        "dev",  # a link to /dev/null
        "etc/passwd",
        "sneaky/secret.txt",  # a link whose target climbs out through an inside link
        "insub/../out_file",
        "sub/../out_dir/",
    ],
)
def test_symbolic_links_leading_outside_are_refused(roots: Roots, path: str) -> None:
    refused(roots, path, "symbolic link that leads outside the allowed directories")


def test_messages_do_not_reveal_what_is_outside(roots: Roots, tree: Path) -> None:
    outside = str(tree)
    messages = [
        refused(roots, "out_file"),
        refused(roots, "abs_out/secret.txt"),
        refused(roots, "../outside/secret.txt"),
        refused(roots, "../outside/missing.txt"),  # same answer whether it exists or not
        refused(roots, "etc/shadow"),
        refused(roots, "nope"),
    ]
    for message in messages:
        assert outside not in message, message
        assert "/etc" not in message.replace("'etc/shadow'", ""), message
    assert refused(roots, "../outside/secret.txt") == refused(roots, "../outside/missing.txt").replace(
        "missing", "secret"
    )


@pytest.mark.process
def test_fifo_socket_and_device_are_refused(roots: Roots, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree / "root"
    os.mkfifo(root / "pipe")
    monkeypatch.chdir(root)  # a short relative name: AF_UNIX paths are limited to ~100 bytes
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock")
        for path in ("pipe", "sock", str(root / "pipe")):
            refused(roots, path, "device, pipe or socket")
    (root / "pipe_link").symlink_to("pipe")
    refused(roots, "pipe_link", "device, pipe or socket")
    refused(roots, "/dev/null", "outside")
    # a root that holds a device: /dev itself
    dev = Roots("/dev")
    with pytest.raises(PathRefused, match="device, pipe or socket"):
        dev.resolve("null")


def test_loops_dangling_links_and_files_used_as_directories(roots: Roots) -> None:
    refused(roots, "loop_a", "too many levels of symbolic links")
    refused(roots, "dangling", "does not exist")
    refused(roots, "a.txt/x", "'a.txt' is not a directory")
    refused(roots, "a.txt/", "is not a directory")
    refused(roots, "a.txt/..", "is not a directory")
    refused(roots, "sub/up/", "is not a directory")
    refused(roots, "a.txt", "is not a directory", kind="dir")
    refused(roots, "sub", "is not a file", kind="file")


def test_text_checks(roots: Roots) -> None:
    refused(roots, "", "empty")
    refused(roots, "a.txt\x00.png", "NUL")
    refused(roots, "\x00", "NUL")
    refused(roots, "a" * (MAX_NAME_BYTES + 1), "longer than 255 bytes")
    refused(roots, "é" * 128, "longer than 255 bytes")  # 256 bytes in UTF-8
    long_path = "/".join(["sub"] * (MAX_PATH_BYTES // 4 + 1))
    message = refused(roots, long_path, "too long")
    assert "sub/sub" not in message
    with pytest.raises(PathRefused, match="must be text"):
        roots.resolve(b"a.txt")  # type: ignore[arg-type]
    assert "\\n" in refused(roots, "a\nb", "does not exist")  # control characters are escaped in messages


def test_tilde_and_variables_are_literal(roots: Roots, tree: Path) -> None:
    refused(roots, "~/a.txt", "does not exist")
    refused(roots, "$HOME/a.txt", "does not exist")
    (tree / "root" / "~").mkdir()
    assert roots.resolve("~") == tree / "root" / "~"


def test_configuration_errors() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Roots()
    with pytest.raises(ValueError, match="not an existing directory"):
        Roots("/nonexistent/baton-test")


def test_from_env(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ROOTS", f"{tree / 'root'}{os.pathsep}{os.pathsep}{tree / 'root2'}")
    assert Roots.from_env("TEST_ROOTS").directories == (tree / "root", tree / "root2")
    monkeypatch.delenv("TEST_ROOTS")
    assert Roots.from_env("TEST_ROOTS", default=[tree / "root2"]).directories == (tree / "root2",)
    monkeypatch.chdir(tree / "root")
    assert Roots.from_env("TEST_ROOTS").directories == (tree / "root",)


# -- open ------------------------------------------------------------------------------------------


def test_open_reads_and_writes_inside(roots: Roots, tree: Path) -> None:
    with roots.open("sub/up") as fh:
        assert fh.read() == "A"
    with roots.open("café/naïve.txt", "rb") as fh:
        assert fh.read() == b"N"
    with roots.open("sub/new.txt", "w", encoding="utf-8") as fh:
        fh.write("new")
    assert (tree / "root" / "sub" / "new.txt").read_text() == "new"
    with roots.open("sub/new.txt", "a") as fh:
        fh.write("er")
    assert (tree / "root" / "sub" / "new.txt").read_text() == "newer"
    with pytest.raises(PathRefused, match="already exists"):
        roots.open("sub/new.txt", "x")
    with pytest.raises(PathRefused, match="does not exist"):
        roots.open("missing/new.txt", "w")
    with pytest.raises(PathRefused, match="symbolic link"):
        roots.open("out_dir/new.txt", "w")
    assert not (tree / "outside" / "new.txt").exists()
    with pytest.raises(PathRefused, match="is not a file"):
        roots.open("sub")
    with pytest.raises(ValueError, match="invalid mode"):
        roots.open("a.txt", "rw")


def test_open_refuses_what_resolve_refuses(roots: Roots, tree: Path) -> None:
    os.mkfifo(tree / "root" / "pipe")
    for path in ("out_file", "../outside/secret.txt", "pipe", "dev"):
        with pytest.raises(PathRefused):
            roots.open(path)


def swap_after_check(monkeypatch: pytest.MonkeyPatch, swap: object) -> None:
    """Run `swap()` right after the check and before the open: a deterministic time-of-check race."""
    real_resolve = Roots._resolve

    def resolve_then_swap(self: Roots, *args: object) -> object:
        result = real_resolve(self, *args)  # type: ignore[arg-type]
        swap()  # type: ignore[operator]
        return result

    monkeypatch.setattr(Roots, "_resolve", resolve_then_swap)


def test_open_refuses_a_directory_swapped_for_a_link(roots: Roots, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree / "root"
    (tree / "outside" / "b.txt").write_text("OUTSIDE")

    def swap() -> None:
        (root / "sub").rename(root / "sub.old")
        (root / "sub").symlink_to(tree / "outside")

    swap_after_check(monkeypatch, swap)
    with pytest.raises(PathRefused, match="changed while it was being opened"):
        roots.open("sub/b.txt")


def test_open_refuses_a_file_swapped_for_a_link(roots: Roots, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree / "root"

    def swap() -> None:
        (root / "a.txt").unlink()
        (root / "a.txt").symlink_to(tree / "outside" / "secret.txt")

    swap_after_check(monkeypatch, swap)
    with pytest.raises(PathRefused, match="changed while it was being opened"):
        roots.open("a.txt")
    assert (tree / "outside" / "secret.txt").read_text() == "SECRET"


def test_open_does_not_hang_on_a_fifo_swapped_in(roots: Roots, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree / "root"

    def swap() -> None:
        (root / "a.txt").unlink()
        os.mkfifo(root / "a.txt")

    swap_after_check(monkeypatch, swap)
    with pytest.raises(PathRefused, match="not a regular file"):
        roots.open("a.txt")  # opened non-blocking, then refused by fstat


def test_open_checks_the_descriptor_real_path(roots: Roots, tree: Path) -> None:
    if not os.path.exists(f"/proc/self/fd/{0}"):
        pytest.skip("needs /proc/self/fd")
    fd = os.open(tree / "root" / "a.txt", os.O_RDONLY)
    try:
        assert baton.paths._fd_path(fd) == str(tree / "root" / "a.txt")
    finally:
        os.close(fd)
    assert baton.paths._fd_path(10**6) is None  # not an open descriptor


# -- the example server, over HTTP ------------------------------------------------------------------


def test_analyze_project_example_over_http(serve, tree: Path) -> None:  # type: ignore[no-untyped-def]
    root = tree / "root"
    server: RunningServer = serve("examples/analyze_project.py", env={"ANALYZE_ROOTS": str(root)})

    resp = call(server.url, "analyze_project", {"path": "sub"})
    assert resp.status_code == 200, resp.text
    result = resp.json()["result"]
    assert result.get("isError") is not True, result
    report = result["structuredContent"]
    assert report["path"] == "sub"
    assert report["files"] == 2  # b.txt, deeper/c.txt
    assert report["directories"] == 1
    assert report["skipped_links"] == 1  # sub/up is not followed
    assert report["by_extension"] == [{"extension": ".txt", "files": 2, "bytes": 2}]

    whole = call(server.url, "analyze_project", {}).json()["result"]["structuredContent"]
    assert whole["path"] == "."
    assert whole["files"] == 5
    assert {e["extension"] for e in whole["by_extension"]} == {".txt", ".md"}
    assert whole["bytes"] == 5  # nothing behind out_file or out_dir was counted

    for path in ("../outside", "out_dir", str(tree / "outside"), "a.txt", "/etc"):
        resp = call(server.url, "analyze_project", {"path": path})
        assert resp.status_code == 200, resp.text
        result = resp.json()["result"]
        assert result["isError"] is True, (path, result)
        text = result["content"][0]["text"]
        assert str(tree) not in text.replace(str(tree / "outside"), "")
        assert "SECRET" not in text
    assert "outside the allowed directories" in call(server.url, "analyze_project", {"path": "../outside"}).text
    assert "symbolic link" in call(server.url, "analyze_project", {"path": "out_dir"}).text
    assert "is not a directory" in call(server.url, "analyze_project", {"path": "a.txt"}).text
