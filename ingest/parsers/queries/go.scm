(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(method_elem name: (field_identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver
    (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @definition.function

(call_expression function: (_) @callee) @call

(import_spec !name path: (interpreted_string_literal (interpreted_string_literal_content) @import.module)) @import
(import_spec name: (package_identifier) @import.alias path: (interpreted_string_literal (interpreted_string_literal_content) @import.module)) @import
