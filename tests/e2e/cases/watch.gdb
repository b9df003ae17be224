# program: e2e_watch
# A hardware watchpoint on a global: Old/New value on each trigger.
target remote @TARGET@
break main
continue
watch watched
info watchpoints
continue
continue
continue
bt
delete
continue
