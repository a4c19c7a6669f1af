"""The DataFrames one analysis caches, released together when it ends.

An analysis that reads a frame more than once caches it (Spark's
``DataFrame.cache``: the storage level ``MEMORY_AND_DISK_DESER``) and must
unpersist it when done, on every path out, errors included: a cache left
behind holds the storage half of the driver's heap in local mode and keeps
its plan (and the plan's broadcast hash tables) alive for the rest of a
notebook's session. :class:`Caches` is that bookkeeping in one place.
"""

from __future__ import annotations


class Caches(list):
    """The frames an analysis cached; leaving its ``with`` block unpersists them.

    A list, so that a function that appends the frames it caches (the
    ``persisted`` list of :func:`dlqlens.detect.run_detectors`) can be handed
    one, and a context manager: on leaving the block, normally or by an
    exception, every frame in it is unpersisted, the last cached first, and
    the list is emptied. A frame that was cached before it came to the
    analysis (the caller's) is never put in it, so never unpersisted.

    Examples
    --------
    >>> with Caches() as caches:                       # doctest: +SKIP
    ...     df = caches.cache(analysis_input(capture))
    ...     findings, links = run_detectors(df, persisted=caches)
    ...     findings = caches.cache(findings)
    """

    def cache(self, df):
        """``df.cache()``, kept to be unpersisted when the block ends.

        Parameters
        ----------
        df : pyspark.sql.DataFrame
            Any DataFrame, of a classic or a Spark Connect session.

        Returns
        -------
        pyspark.sql.DataFrame
            The cached frame (``df`` itself: Spark's ``cache`` returns it).
        """
        cached = df.cache()
        self.append(cached)
        return cached

    def cache_all(self, *frames) -> list:
        """Each of ``frames`` cached as :meth:`cache` does, side by side.

        Caching a classic session's DataFrame plans it there and then (the
        optimized and physical plans of what the cache will hold: a second
        or more for the detectors' findings or links, the JVM's work while
        the interpreter waits), so frames that do not depend on each other
        are cached in threads of their own
        (:func:`dlqlens.spark.driver.plan_in_threads`).

        Parameters
        ----------
        *frames : pyspark.sql.DataFrame
            DataFrames of one session, none built from another's cache.

        Returns
        -------
        list of pyspark.sql.DataFrame
            The cached frames, in the order given.
        """
        from dlqlens.spark.driver import plan_in_threads

        if not frames:
            return []
        return plan_in_threads(frames[0].sparkSession, self.cache, frames)

    def release(self) -> None:
        """Unpersist every frame kept, the last cached first, and forget them.

        Each one is released even when an earlier one's ``unpersist`` raised
        (a session stopped meanwhile); the first such error is raised after.
        """
        error = None
        while self:
            try:
                self.pop().unpersist()
            except Exception as exc:  # noqa: BLE001 - the others are still released
                error = error or exc
        if error is not None:
            raise error

    def __enter__(self) -> "Caches":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        # an error of the release raised while the block's own propagates keeps that one
        # as its context (Python chains them): neither is lost
        self.release()
        return False


__all__ = ["Caches"]
