// hint, c_hint and s_hint as ordinary names: no hints here, so the output must be stock's.
const i32 s_hint = 3
const map<i32, i32> M = {s_hint: 4}

enum c_hint {
  hint = 1,
  s_hint = 2
}

struct hint {
  1: i32 hint,
  2: string c_hint,
  3: map<i32, i32> s_hint = {s_hint: 5}
}

typedef hint s_hint_t

exception hint_error {
  1: string hint
}

service s_hint_service {
  hint hint(1: hint c_hint) throws (1: hint_error s_hint),
  void c_hint(1: i32 hint);
  s_hint_t s_hint(1: map<i32, i32> m = {s_hint: 1})
}
