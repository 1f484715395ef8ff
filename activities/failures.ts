// Activity errors as Temporal failures: each activity module says which of its errors are final
// (non-retryable, typed with the code recorded on the job) and passes the rest through for retry.
export function guardWith(toFailure: (err: unknown) => unknown) {
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toFailure(err);
    }
  };
}
