// Thrift keywords are read as values (and keys) inside a group; these are not valid ones.
service S {
  hint: polling = binary, proto = string;
  void f() [ s_hint: binary = 1; ]
}
