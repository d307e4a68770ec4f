// A hatrpc annotation on a struct (found at the end of the file) is not a hint.
struct P {
  1: i32 x
} (hatrpc.perf_goal = "latency")
