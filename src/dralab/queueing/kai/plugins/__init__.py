"""KAI Scheduler's plugins as a session switches them on (issue 35, kai-plugins): the
tiers of the scheduler configuration and what each plugin decides."""
