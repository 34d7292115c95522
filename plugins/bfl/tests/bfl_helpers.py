"""Settings shared by the BFL plugin's tests."""

KEY_ENV = "FACEEDIT_TEST_BFL_KEY"
#: Quick, local settings: short polls, a short poll deadline, short backoff. The request deadline is generous: on
#: a loaded machine a slow answer must not time out and be retried (a timeout is transient), which would add an
#: attempt the tests do not expect; the test of a timed-out request sets a short one (the fake hangs 1.5 s).
FAST = {"poll_interval_s": 0.02, "poll_timeout_s": 1.0, "request_timeout_s": 10.0}
FAST_LIMITS = {"timeout_s": 15.0, "backoff_initial_s": 0.01, "backoff_max_s": 0.05}
#: A request deadline the fake's hang (1.5 s) runs past.
SHORT_REQUEST_TIMEOUT_S = 1.0
