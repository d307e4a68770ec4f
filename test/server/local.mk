# test/server: rules for this part of the tree.
