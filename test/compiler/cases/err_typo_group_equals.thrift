// A group keyword followed by = instead of :.
service S {
  void f() [ c_hint = payload_size = 64; ]
}
