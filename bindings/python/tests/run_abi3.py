"""The abi3 claim: the extension built once (for /usr/bin/python3) loads and
gives the same results on every other CPython 3.8+ on this machine (pyenv's,
or those in NEXTOK_PYTHONS, separated by ':'). Exit 77 (skipped) when there
is no other interpreter to try."""
import glob
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "abi3_smoke.py")
found = os.environ.get("NEXTOK_PYTHONS", "")
pythons = [p for p in found.split(":") if p] or sorted(
    glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")) +
    glob.glob("/root/.pyenv/versions/3.*/bin/python3"))


def version(exe):
    out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[0] * 100 + sys.version_info[1])"],
                         capture_output=True, text=True)
    return int(out.stdout) if out.returncode == 0 else 0


pythons = sorted({os.path.realpath(p) for p in pythons if version(p) >= 308})
if not pythons:
    print("no other CPython 3.8+ found (pyenv, or NEXTOK_PYTHONS)")
    sys.exit(77)
env = dict(os.environ)


def run(exe):
    out = subprocess.run([exe, script], capture_output=True, text=True, env=env)
    return out.returncode, out.stdout.strip(), out.stderr.strip()


rc, want, err = run(sys.executable)
assert rc == 0, err
failed = 0
for exe in pythons:
    rc, got, err = run(exe)
    ok = rc == 0 and got == want
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} Python {version(exe) // 100}.{version(exe) % 100} ({exe})"
          + ("" if ok else f": {got or err.splitlines()[-1] if err else got}"))
print(f"reference ({sys.executable}): {want}")
sys.exit(1 if failed else 0)
