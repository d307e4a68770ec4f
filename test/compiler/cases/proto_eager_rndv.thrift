// proto = eager_rndv, the pair Eager-SendRecv small / Read-RNDV large (AR-gRPC's; the HatRPC
// paper's Hybrid-EagerRNDV baseline), and the paper's spelling of it, hybrid_eager_rndv.
service E {
  hint: proto = eager_rndv;
  binary get(1: binary key)
  void put(1: binary value) [ c_hint: proto = hybrid_eager_rndv; s_hint: proto = eager; ]
  void quoted() [ hint: proto = "hybrid_eager_rndv", payload_size = 64K; ]
}
