print("creased: not built yet")
