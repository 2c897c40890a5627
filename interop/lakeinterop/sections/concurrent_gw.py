"""versitygw (an S3 server, posix backend) on a free loopback port, for the concurrent section.

Started as internal/s3test starts it: root credentials, us-east-1, keep-alive,
`posix [--sidecar DIR] DATADIR`; bucket B's objects are files under DATADIR/B,
which lets engines without S3 jars (Spark here) read a table as a local path.
"""
import os
import subprocess
import urllib.error
import urllib.request

from .. import paths, procs

ACCESS_KEY = "lakesqltest"
SECRET_KEY = "lakesqltestsecret"
REGION = "us-east-1"


def _xattrs_work(d):
    p = os.path.join(d, ".xattr-probe")
    open(p, "w").close()
    try:
        os.setxattr(p, "user.lakesql", b"1")
        return True
    except OSError:
        return False
    finally:
        os.remove(p)


class Versitygw:
    """One versitygw process serving DIR/data, with BUCKET created through the S3 API."""

    def __init__(self, dir, bucket="lake"):
        self.dir = dir
        self.data = os.path.join(dir, "data")
        self.bucket = bucket
        self.proc = None
        self.endpoint = None

    def env(self):
        """The AWS_* variables a client of this server needs."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_REGION": REGION}

    def bucket_dir(self):
        """The posix folder holding the bucket's objects as files."""
        return os.path.join(self.data, self.bucket)

    def start(self):
        os.makedirs(self.data, exist_ok=True)
        args = []
        if not _xattrs_work(self.data):
            meta = os.path.join(self.dir, "meta")
            os.makedirs(meta, exist_ok=True)
            args = ["--sidecar", meta]
        port = procs.free_port()
        self.endpoint = "http://127.0.0.1:%d" % port
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VGW_", "ROOT_"))}
        log = open(os.path.join(self.dir, "versitygw.log"), "a")
        self.proc = subprocess.Popen(
            [paths.VERSITYGW, "--port", "127.0.0.1:%d" % port, "--access", ACCESS_KEY,
             "--secret", SECRET_KEY, "--region", REGION, "--keep-alive", "posix"] + args + [self.data],
            cwd=self.dir, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env)

        def answers():
            try:
                urllib.request.urlopen(self.endpoint + "/", timeout=1).close()
                return True
            except urllib.error.HTTPError:
                return True  # any answer (403 unsigned) means it serves
            except OSError:
                return False
        procs.wait_ready(self.proc, "versitygw on " + self.endpoint, answers, 30, log.name, interval=0.05)
        from pyarrow import fs
        s3 = fs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION,
                             endpoint_override=self.endpoint, scheme="http",
                             allow_bucket_creation=True)
        s3.create_dir(self.bucket)
        return self

    def stop(self):
        procs.stop(self.proc, timeout=10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
