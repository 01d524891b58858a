"""Staff as people in the desk: a package whose modules say what they hold.

- `people.py`: who acts and from where (`Actor`, the default name, settings.toml);
- `times.py`: times staff type (`2h`, `-1d`, an ISO date);
- `audit.py`: who wrote an item, the action in words, the audit fold (`audit`);
- `replies.py`: saved replies and macros (`replies.toml`), what staff send often; below the
  engine like the three above, not re-exported;
- `acts.py`: the staff actions on a session's log (take over, release, reply, state, tag, note,
  handoff, context, approvals, withdrawing an offer), each under the session's turn lease; the
  runner's methods of the same names delegate to it;
- `requests.py`: the actions as the command line and the web API ask for them, and when each
  is refused;
- `command.py`: their subcommands (`supportdesk takeover ...`, `audit`).

`people`, `times` and `audit` sit below the engine (the log's readers use them) and are
re-exported here; `acts` sits at the engine's level, `requests` beside it, and `command` with the
commands (tests/test_layers.py checks each).
"""

from supportdesk.staff.audit import (
    PART_OF_ACT,
    AuditEntry,
    action_name,
    actor_of,
    audit,
    audit_detail,
    describe,
    tag_words,
)
from supportdesk.staff.people import (
    ORIGINS,
    STAFF_NAME_VARIABLE,
    Actor,
    SettingsError,
    chosen_name,
    default_actor,
    default_person,
    settings_path,
)
from supportdesk.staff.times import WhenError, parse_duration, parse_when

__all__ = [
    "ORIGINS",
    "PART_OF_ACT",
    "STAFF_NAME_VARIABLE",
    "Actor",
    "AuditEntry",
    "SettingsError",
    "WhenError",
    "action_name",
    "actor_of",
    "audit",
    "audit_detail",
    "chosen_name",
    "default_actor",
    "default_person",
    "describe",
    "parse_duration",
    "parse_when",
    "settings_path",
    "tag_words",
]
