# program: e2e_basic
# Shared libraries as seen through qXfer:libraries-svr4 and vFile.
target remote @TARGET@
info sharedlibrary
break main
continue
info sharedlibrary
info proc
