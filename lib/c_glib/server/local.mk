# lib/c_glib/server: rules for this part of the tree.
