"""The test environment's references (python/requirements-test.txt) for the differential
tests: which are pinned, and running one of the runners in a process of a reference."""
import os
import pickle
import re
import subprocess

import golden

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def pinned(package):
    """{"package==X": (version tuple, target directory name or None)} from the pin file."""
    references = {}
    pattern = re.compile(r"\s*(%s==(\S+))\s*(?:#\s*target:\s*(\S+))?" % re.escape(package))
    with open(os.path.join(golden.REPO_DIR, "python", "requirements-test.txt")) as f:
        for line in f:
            match = pattern.match(line)
            if match:
                references[match.group(1)] = (
                    tuple(int(p) for p in match.group(2).split(".")), match.group(3))
    return references


def env_dir():
    """The test environment (run_pytest.sh exports it; else tools/python_env.sh finds it)."""
    return os.environ.get("MROPE_PYENV") or subprocess.run(
        [os.path.join(golden.REPO_DIR, "tools", "python_env.sh"), "--locate"],
        check=True, capture_output=True, text=True).stdout.strip()


def run(runner, target, request, with_mrope=False, site=None, unset=()):
    """Runs python/tests/`runner` in the environment's python with directory `target` (or
    none: the venv's own packages) first on sys.path, then (`with_mrope`) the mrope package
    under test, then `site` (e.g. a dist-info declaring entry points), without the environment
    variables `unset`; `request` in, its response out."""
    path = [os.path.join(env_dir(), "targets", target)] if target else []
    if with_mrope:
        import mrope  # pylint: disable=import-outside-toplevel
        path.append(os.path.dirname(os.path.dirname(os.path.abspath(mrope.__file__))))
    if site:
        path.append(site)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    for name in unset:
        env.pop(name, None)
    process = subprocess.run([os.path.join(env_dir(), "bin", "python"),
                              os.path.join(TESTS_DIR, runner)],
                             input=pickle.dumps(request), capture_output=True, env=env)
    assert process.returncode == 0, process.stderr.decode()[-4000:]
    return pickle.loads(process.stdout)
