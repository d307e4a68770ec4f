// Hint keys and look-alikes of group keywords as ordinary names, also inside a service body
// (types, functions, arguments, throws, annotations, defaults): no hints here, so the output
// must be stock's.
const i32 perf_goal = 1
const map<i32, i32> hints = {perf_goal: 2}

enum polling {
  busy = 1,
  event = 2
}

struct hints_t {
  1: i32 perf_goal = 5,
  2: string concurrency,
  3: polling polling = polling.busy,
  4: map<i32, i32> proto = {perf_goal: 3}
}

typedef hints_t transport

exception numa {
  1: string payload_size
}

service hints {
  transport perf_goal(1: hints_t concurrency, 2: map<i32, i32> c = {perf_goal: 1})
    throws (1: numa proto) (perf_pref = "busy", hints = "x"),
  oneway void polling(1: i32 numa);
  hints_t c(1: transport hints)
} (perf_goal = "latency")

service perf_pref extends hints {
  void proto()
}
