// A doc comment never closed, after a function's hint block (stock thrift 0.17.0 hangs on one: 0010).
service S {
  void f() [ hint: polling = event; ]
  /** not closed
