struct S {
  hint: polling = busy;
}
