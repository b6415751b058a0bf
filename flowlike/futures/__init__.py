"""flowlike.futures (torch.futures): Future, the result of an asynchronous operation, with callbacks chained by
then(). flowlike's collectives complete when waited on or polled (MPI progresses inside MPI calls), so a Future
made by Work.get_future() drives its Work: done() polls it, wait() waits for it."""

__all__ = ["Future", "collect_all", "wait_all"]

_PENDING = object()


class Future:
    """A value that becomes available later: set_result() / set_exception() complete it; wait() returns the value
    (raising the exception); then(callback) is a Future of callback(this future)."""

    def __init__(self, *, devices=None):
        self._value = _PENDING
        self._exception = None
        self._callbacks = []
        self._drive = None  # (poll, wait) of the operation that completes this future, if any

    def _completed(self):
        return self._value is not _PENDING or self._exception is not None

    def done(self):
        """Whether the future has a value or an exception (polls the operation behind it, never blocks)."""
        if not self._completed() and self._drive is not None:
            self._drive[0]()
        return self._completed()

    def wait(self):
        """Blocks until the future completed; returns its value (raises its exception)."""
        if not self.done():
            if self._drive is None:
                raise RuntimeError("Future.wait(): the future was never completed (set_result was not called)")
            self._drive[1]()
        return self.value()

    def value(self):
        """The value of a completed future (raises its exception)."""
        if self._exception is not None:
            raise self._exception
        if self._value is _PENDING:
            raise RuntimeError("Future.value(): the future is not completed")
        return self._value

    def set_result(self, result):
        """Completes the future with result and runs its callbacks."""
        if self._completed():
            raise RuntimeError("Future can only be marked completed once.")
        self._value = result
        self._run_callbacks()

    def set_exception(self, result):
        """Completes the future with an exception, which wait() and value() raise."""
        if self._completed():
            raise RuntimeError("Future can only be marked completed once.")
        self._exception = result
        self._run_callbacks()

    def _run_callbacks(self):
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def add_done_callback(self, callback):
        """Runs callback(self) once the future completed (at once if it has)."""
        if self._completed():
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback):
        """A Future of callback(self), computed once this future completed."""
        child = Future()

        def run(parent):
            try:
                child.set_result(callback(parent))
            except Exception as e:  # noqa: BLE001 - the callback's error belongs to the child future
                child.set_exception(e)
        child._drive = (lambda: self.done(), lambda: self.wait())
        self.add_done_callback(run)
        return child


def collect_all(futures):
    """A Future of the list of futures, completed when all of them are."""
    futures = list(futures)
    return _driven(lambda: all(f.done() for f in futures), lambda: wait_all(futures), lambda: futures)


def _driven(poll, wait, result):
    """A Future completed with result() once poll() is true or wait() returned."""
    future = Future()

    def poll_and_complete():
        if poll() and not future._completed():
            future.set_result(result())

    def wait_and_complete():
        wait()
        if not future._completed():
            future.set_result(result())
    future._drive = (poll_and_complete, wait_and_complete)
    return future


def wait_all(futures):
    """Waits for every future; returns their values."""
    return [f.wait() for f in futures]
