service S {
  void f(hint: polling = busy;)
}
