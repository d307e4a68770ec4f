// Service of the threaded server tests (test/server/test_threaded_server.c).

service Gate {
  // Enters, waits until N calls are inside at once or TIMEOUT_MS passed, and returns the
  // most calls that were inside at once while it waited.
  i32 gather(1: i32 n, 2: i32 timeout_ms),
  binary echo(1: binary data),
  i32 ping(1: i32 x)
}
