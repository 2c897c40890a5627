"""Where the suite finds the repository, its build folder and binaries."""
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("LAKESQL_INTEROP_BUILD", os.path.join(ROOT, "build", "interop")))
LAKESQL = os.path.join(ROOT, "bin", "lakesql")
VERSITYGW = os.path.join(ROOT, "bin", "versitygw")


def workdir(name):
    """A fresh folder of the run's own, BUILD/runs/NAME."""
    import shutil
    d = os.path.join(BUILD, "runs", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d
