# program: e2e_basic
# bt in a nested call, frame selection, up/down.
target remote @TARGET@
break leaf
continue
bt
bt full
bt 2
bt -2
frame 1
info frame
up
info locals
down 2
frame function main
