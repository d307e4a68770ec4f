# tutorial: rules for this part of the tree.
