// placeholder until the CreaseDaemon sources land
