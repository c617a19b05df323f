"""Operations: living with Omega on one's own machine (backup and restore, the run lock, the
service unit, sd_notify, the start-up self-check, the set-up wizard)."""
