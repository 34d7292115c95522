"""Making calls to models.

* ``calls``: one provider-agnostic way to call hosted models; ``call_errors``: how a call fails (retryable,
  given up, endpoint unreachable); ``endpoints``: where a hosted component's calls go; ``limits``: how calls to
  one provider may be made; ``offline``: commands that make no provider calls need no keys; ``secrets``: API
  keys, kept out of every output; ``hosted``: what every hosted provider's component shares (parameters,
  connection and clients, setup), and ``hosted_errors``: the meaning of its error answers and failed exchanges.
* ``budget``: the run's spending budget; ``cost``: estimated cost from usage and prices; ``busy_clock``: the
  wall time a stage was busy.
* Local models: ``batching`` (a micro-batcher), ``local_models`` (finding and loading local weights), ``parent_watch``
  (workers end with their parent).
"""
