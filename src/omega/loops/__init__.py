"""Background loops (summarizer, scheduler, heartbeat) and the files they keep."""
