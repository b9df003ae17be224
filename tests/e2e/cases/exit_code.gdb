# program: e2e_exit
# args: 3
# A non-zero exit code, and argv passed through.
target remote @TARGET@
break main
continue
print argc
print argv[1]
continue
