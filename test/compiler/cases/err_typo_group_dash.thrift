// c-hint for c_hint at service level.
service S {
  c-hint: payload_size = 64;
  void f()
}
