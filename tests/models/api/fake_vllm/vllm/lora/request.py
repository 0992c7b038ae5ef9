class LoRARequest:
    def __init__(self, name, id_, path):
        self.name, self.id, self.path = name, id_, path
