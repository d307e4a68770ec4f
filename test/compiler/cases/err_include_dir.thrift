// An include of a directory (stock thrift 0.17.0: "input in flex scanner failed", no place: 0012).
include "."
service S {
  void f() [ hint: polling = busy; ]
}
