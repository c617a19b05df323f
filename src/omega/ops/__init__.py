"""Operations: living with Omega on one's own machine (backup and restore, the run lock, the
service unit, sd_notify, the start-up self-check, the set-up wizard).

The package's public face is the list of public submodules below (`__all__`): callers outside
`omega.ops` import one of these modules or names from it. They are not imported here: each CLI
command uses one of them, and importing all of them would cost every start.
- backup: `omega backup` and `omega restore`
- migrate_store: `omega migrate-store`, a home's memory.db copied into PostgreSQL, verified
- runlock: the run lock a running Omega holds
- service: `omega service` (systemd user unit, launchd agent)
- notify: sd_notify, ready and stopping
- selfcheck: what must hold for Omega to work
- security: `omega security audit`, the checks that also feed the self-check and Health page
- setup: the set-up wizard's answers, written into config.toml
- fleet: the replicas sharing the database and their leases, for status and the Health page
- stacks: where a hung Omega is stuck, written on SIGUSR1 (OMEGA_DUMP_STACKS)
"""

__all__ = [
    "backup",
    "fleet",
    "migrate_store",
    "notify",
    "runlock",
    "security",
    "selfcheck",
    "service",
    "setup",
    "stacks",
]
