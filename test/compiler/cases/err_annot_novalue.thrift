// A hatrpc annotation needs a value (Thrift would read "1").
service S {
  void f() (hatrpc.concurrency)
}
