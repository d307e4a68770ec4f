// An unterminated quoted value at the very end of the file.
service S {
  hint: polling = "event