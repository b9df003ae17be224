break sum if n == 0
continue
backtrace
up 5
print *list
print *list->next
info locals
frame 0
finish
continue
