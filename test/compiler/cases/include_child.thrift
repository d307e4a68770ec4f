// A child service inherits the hints of a parent in an included file.
include "inc_base.thrift"

service IncChild extends inc_base.IncBase {
  s_hint: polling = event;
  void y()
}
