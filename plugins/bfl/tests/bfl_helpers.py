"""Settings shared by the BFL plugin's tests."""

KEY_ENV = "FACEEDIT_TEST_BFL_KEY"
#: Quick, local settings: short polls and deadlines, short backoff.
FAST = {"poll_interval_s": 0.02, "poll_timeout_s": 1.0, "request_timeout_s": 1.0}
FAST_LIMITS = {"timeout_s": 5.0, "backoff_initial_s": 0.01, "backoff_max_s": 0.05}
