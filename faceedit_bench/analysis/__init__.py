"""Analysis: statistics over scored sessions, groups and test sets."""
