// A oneway function that returns a named type: a warning (stock thrift 0.17.0 crashes on one: 0011).
struct R { 1: i32 x }
service S {
  hint: polling = busy;
  oneway R f() [ c_hint: proto = rfp; ]
}
