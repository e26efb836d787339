# SPDX-License-Identifier: MIT
"""The broker's access list and passwords for a hall's tables (``bgboard hall --make-acl``).

Each board may write only under its own table and read the hall's orders; the hall reads every
table and writes only its orders. Passwords are hashed by Mosquitto's ``mosquitto_passwd``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from bgboard.errors import HallError, PublishError
from bgboard.hall.topics import CONTROL_TOPIC, HALL_USER, TOPIC_ROOT, check_table_name, confirmed_topic


def acl_text(tables: Iterable[str], hall_user: str = HALL_USER) -> str:
    """Mosquitto's ACL file: each table's user writes only under its table and reads the
    hall's orders, resend requests and confirmations for it; the hall reads every table and writes only the orders.

    >>> print(acl_text(["t1"]))  # doctest: +ELLIPSIS
    # bgboard hall ACL...
    user hall
    topic read bgboard/v1/tables/#
    topic write bgboard/v1/hall/#
    <BLANKLINE>
    user t1
    topic write bgboard/v1/tables/t1/#
    topic read bgboard/v1/hall/control
    topic read bgboard/v1/hall/resend/t1
    topic read bgboard/v1/hall/confirmed/t1
    <BLANKLINE>
    """
    lines = [
        "# bgboard hall ACL (bgboard hall --make-acl): one user per table, and the hall.",
        f"user {hall_user}",
        f"topic read {TOPIC_ROOT}/tables/#",
        f"topic write {TOPIC_ROOT}/hall/#",
        "",
    ]
    for table in tables:
        check_table_name(table)
        lines += [
            f"user {table}",
            f"topic write {TOPIC_ROOT}/tables/{table}/#",
            f"topic read {CONTROL_TOPIC}",
            f"topic read {TOPIC_ROOT}/hall/resend/{table}",
            f"topic read {confirmed_topic(table)}",
            "",
        ]
    return "\n".join(lines)


def make_acl(
    tables: Sequence[str],
    folder: Path,
    *,
    passwords: dict[str, str] | None = None,
    hall_user: str = HALL_USER,
    port: int = 1883,
) -> dict[str, str]:
    """Write ``acl``, ``passwd`` (hashed by ``mosquitto_passwd``), ``passwords.txt`` (the
    plain passwords, to hand to each board, mode 600) and ``bgboard.conf`` (the mosquitto.conf
    lines) in ``folder``; returns each user's password.

    :param passwords: passwords to use; users not in it get a random one.
    :raises PublishError: a bad or repeated table name.
    :raises HallError: ``mosquitto_passwd`` is missing or fails.
    """
    import secrets
    import shutil

    names = [check_table_name(t) for t in tables]
    if len(set(names) | {hall_user}) != len(names) + 1:
        raise PublishError(f"table names repeat, or one is the hall's user {hall_user!r}")
    program = shutil.which("mosquitto_passwd")
    if program is None:
        raise HallError("mosquitto_passwd is missing: sudo apt-get install mosquitto")
    folder.mkdir(parents=True, exist_ok=True)
    given = passwords or {}
    secret = {user: given.get(user) or secrets.token_urlsafe(12) for user in [hall_user, *names]}
    (folder / "acl").write_text(acl_text(names, hall_user))
    passwd = folder / "passwd"
    plain = folder / "passwords.txt"
    plain.write_text("".join(f"{user} {pw}\n" for user, pw in secret.items()))
    plain.chmod(0o600)
    # mosquitto_passwd -U hashes a file of user:password lines in place.
    passwd.write_text("".join(f"{user}:{pw}\n" for user, pw in secret.items()))
    passwd.chmod(0o600)
    done = subprocess.run([program, "-U", str(passwd)], capture_output=True, text=True)
    if done.returncode != 0:
        raise HallError(f"mosquitto_passwd failed: {done.stderr.strip() or done.stdout.strip()}")
    (folder / "bgboard.conf").write_text(
        f"# bgboard hall: include from /etc/mosquitto/conf.d/ (see docs/hall.md)\n"
        f"listener {port}\nallow_anonymous false\n"
        f"password_file {passwd.resolve()}\nacl_file {(folder / 'acl').resolve()}\n"
        "persistence true\nmax_queued_messages 0\n"
    )
    return secret
