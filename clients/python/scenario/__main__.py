"""python -m scenario CLIENT: runs clients/SCENARIO.md for one Python client."""

import sys

from . import steps
from .checks import Checks
from .client import Env


def clients():
    from . import drivers, sqla
    return {
        "pymysql": drivers.PyMySQL,
        "mysqlclient": drivers.MySQLdb,
        "mysql-connector-python": drivers.MySQLConnector,
        "sqlalchemy": sqla.SQLAlchemy,
        "pandas": sqla.Pandas,
    }


def main():
    known = clients()
    if len(sys.argv) != 2 or sys.argv[1] not in known:
        print(f"usage: python -m scenario {{{'|'.join(known)}}}", file=sys.stderr)
        sys.exit(2)
    name = sys.argv[1]
    ck = Checks(name)
    try:
        client = known[name](Env())
    except Exception as e:
        ck.run("the client loads", lambda: (_ for _ in ()).throw(e))
        ck.finish()
    steps.run(client, ck)
    ck.finish()


main()
