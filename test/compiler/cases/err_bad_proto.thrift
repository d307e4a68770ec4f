// A proto value that is neither a protocol nor a pair: the message lists eager_rndv and its
// other spelling among what is allowed.
service S {
  void f() [ c_hint: proto = eager_rendezvous; ]
}
